"""Training an encoder with a Jacobian-vector-product smoothness penalty: the compiled loss
uses forward-mode automatic differentiation (dual tensors inside a dual level) to get the
directional derivative of the encoder along random probe directions."""
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, dim=16, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, 8))

    def forward(self, x):
        return self.net(x)


def jvp_penalty(encoder, x, probe):
    with fwAD.dual_level():
        dual_x = fwAD.make_dual(x, probe)
        out = encoder(dual_x)
        tangent = fwAD.unpack_dual(out).tangent
    return tangent.pow(2).sum(-1).mean()


encoder = Encoder()
opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)


@torch.compile
def loss_fn(x, target):
    probe = torch.randn_like(x)
    recon = encoder(x)
    return (recon - target).pow(2).mean() + 0.1 * jvp_penalty(encoder, x, probe)


for _ in range(4):
    x = torch.randn(8, 16)
    loss = loss_fn(x, torch.randn(8, 8))
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss)
