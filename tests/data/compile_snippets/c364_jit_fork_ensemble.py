"""Ensemble inference written for TorchScript: the wrapper's forward forks one task per member
with torch.jit.fork and averages the waited results; the wrapper is now put under torch.compile."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Member(nn.Module):
    def __init__(self, dim=32, classes=5):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, classes))

    def forward(self, x):
        return self.net(x).log_softmax(-1)


class ForkedEnsemble(nn.Module):
    def __init__(self, members):
        super().__init__()
        self.members = nn.ModuleList(members)

    def _run_members(self, x):
        futures = [torch.jit.fork(m, x) for m in self.members]
        return [torch.jit.wait(f) for f in futures]

    def forward(self, x):
        outs = self._run_members(x)
        return torch.logsumexp(torch.stack(outs), 0) - torch.log(torch.tensor(float(len(outs))))


ensemble = torch.compile(ForkedEnsemble([Member() for _ in range(4)]).eval())
with torch.no_grad():
    for _ in range(3):
        pred = ensemble(torch.randn(8, 32)).argmax(-1)
print(pred.tolist())
