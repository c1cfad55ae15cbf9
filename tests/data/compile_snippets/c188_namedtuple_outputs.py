"""Detection-style model whose forward returns a typed NamedTuple (logits, features and an
optional auxiliary regularizer filled in with _replace), which the training loop unpacks by
field name."""
from typing import NamedTuple, Optional

import torch
import torch.nn as nn

torch.manual_seed(0)


class ModelOutput(NamedTuple):
    logits: torch.Tensor
    features: torch.Tensor
    aux_loss: Optional[torch.Tensor] = None


class Net(nn.Module):
    def __init__(self, dim=16, classes=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, 32))
        self.cls = nn.Linear(32, classes)

    def forward(self, x):
        feats = self.backbone(x)
        out = ModelOutput(logits=self.cls(feats), features=feats)
        if self.training:
            out = out._replace(aux_loss=feats.pow(2).mean())
        return out


net = Net()
cnet = torch.compile(net)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for step in range(4):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    out = cnet(x)
    loss = nn.functional.cross_entropy(out.logits, y) + 1e-3 * out.aux_loss
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}", out.features.shape)
