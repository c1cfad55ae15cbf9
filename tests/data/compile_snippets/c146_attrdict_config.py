"""Research-code transformer block configured from a YAML-like nested dict wrapped in a small
attribute-access dict class; the block reads its hyper-parameters from the config object inside
forward, and the model is compiled for training."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class AttrDict(dict):
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__

    @classmethod
    def from_nested(cls, d):
        return cls({k: cls.from_nested(v) if isinstance(v, dict) else v for k, v in d.items()})


CONFIG = AttrDict.from_nested({
    "model": {"dim": 32, "heads": 4, "residual_scale": 0.5, "pre_norm": True},
    "optim": {"lr": 1e-3},
})


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.norm = nn.LayerNorm(cfg.dim)
        self.attn = nn.MultiheadAttention(cfg.dim, cfg.heads, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(cfg.dim, 2 * cfg.dim), nn.GELU(), nn.Linear(2 * cfg.dim, cfg.dim))

    def forward(self, x):
        h = self.norm(x) if self.cfg.pre_norm else x
        a, _ = self.attn(h, h, h, need_weights=False)
        x = x + self.cfg.residual_scale * a
        return x + self.cfg.residual_scale * self.ff(self.norm(x))


model = nn.Sequential(Block(CONFIG.model), Block(CONFIG.model))
cmodel = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=CONFIG.optim.lr)
for step in range(4):
    loss = cmodel(torch.randn(2, 10, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.detach())
