"""Recurrent-style sequence model trained with gradient clamping on the hidden activations: the
compiled forward registers a tensor hook on the intermediate hidden state that clamps its
gradient during backward."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Stepper(nn.Module):
    def __init__(self, dim=24, steps=5, clamp=0.05):
        super().__init__()
        self.cell = nn.Linear(2 * dim, dim)
        self.readout = nn.Linear(dim, 1)
        self.steps = steps
        self.clamp = clamp

    def forward(self, x):
        h = torch.zeros_like(x[:, 0])
        for t in range(self.steps):
            h = torch.tanh(self.cell(torch.cat([x[:, t], h], dim=-1)))
            if h.requires_grad:
                h.register_hook(lambda g: g.clamp(-self.clamp, self.clamp))
        return self.readout(h)


model = Stepper()
cmodel = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(4):
    x, y = torch.randn(8, 5, 24), torch.randn(8, 1)
    loss = nn.functional.mse_loss(cmodel(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
