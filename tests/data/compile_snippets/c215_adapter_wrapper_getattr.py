"""PEFT-style fine-tuning: the base model is wrapped in an adapter model that forwards unknown
attribute reads (its config, its scale) to the wrapped model through __getattr__, and the wrapper
is what gets compiled and trained."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class BaseModel(nn.Module):
    def __init__(self, dim=32, classes=4):
        super().__init__()
        self.config = {"hidden": dim, "logit_scale": 0.5}
        self.body = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        return self.head(self.body(x))


class AdapterModel(nn.Module):
    def __init__(self, base, rank=4):
        super().__init__()
        self.base_model = base.requires_grad_(False)
        dim = base.config["hidden"]
        self.down = nn.Linear(dim, rank, bias=False)
        self.up = nn.Linear(rank, dim, bias=False)
        nn.init.zeros_(self.up.weight)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.base_model, name)

    def forward(self, x):
        h = self.body(x)
        h = h + self.up(self.down(h))
        return self.head(h) * self.config["logit_scale"]


model = AdapterModel(BaseModel())
cmodel = torch.compile(model)
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
for _ in range(4):
    loss = nn.functional.cross_entropy(cmodel(torch.randn(8, 32)), torch.randint(0, 4, (8,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
