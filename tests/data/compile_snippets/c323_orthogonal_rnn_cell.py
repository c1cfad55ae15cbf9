"""A recurrent cell with an orthogonal recurrent matrix (torch.nn.utils.parametrizations.
orthogonal) unrolled over a fixed number of steps in a compiled sequence classifier, to
keep gradients stable over long sequences."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrizations

torch.manual_seed(0)


class OrthoRNN(nn.Module):
    def __init__(self, n_in=8, hidden=32, n_cls=3):
        super().__init__()
        self.inp = nn.Linear(n_in, hidden)
        self.rec = parametrizations.orthogonal(nn.Linear(hidden, hidden, bias=False))
        self.head = nn.Linear(hidden, n_cls)

    def forward(self, seq):
        h = seq.new_zeros(seq.shape[0], self.rec.weight.shape[0])
        for t in range(seq.shape[1]):
            h = torch.tanh(self.inp(seq[:, t]) + self.rec(h))
        return self.head(h)


model = OrthoRNN()
compiled = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(4):
    seq, y = torch.randn(6, 12, 8), torch.randint(0, 3, (6,))
    loss = F.cross_entropy(compiled(seq), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss)
