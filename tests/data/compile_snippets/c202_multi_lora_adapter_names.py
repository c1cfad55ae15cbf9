"""Multi-LoRA serving: one base projection, several LoRA adapters kept in a ModuleDict by name,
and each batched request carries the adapter name its rows should use."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class LoRAAdapter(nn.Module):
    def __init__(self, dim, rank=4, alpha=8.0):
        super().__init__()
        self.A = nn.Linear(dim, rank, bias=False)
        self.B = nn.Linear(rank, dim, bias=False)
        self.scale = alpha / rank

    def forward(self, x):
        return self.B(self.A(x)) * self.scale


class MultiLoRALinear(nn.Module):
    def __init__(self, dim=32, names=("sql", "chat", "code", "summarize")):
        super().__init__()
        self.base = nn.Linear(dim, dim)
        self.adapters = nn.ModuleDict({n: LoRAAdapter(dim) for n in names})

    def forward(self, x, adapter_names):
        out = self.base(x)
        delta = torch.stack([self.adapters[name](row) for name, row in zip(adapter_names, x)])
        return out + delta


layer = MultiLoRALinear().eval()
serve = torch.compile(layer)
requests = [["sql", "chat", "chat"], ["code", "sql", "summarize"], ["chat", "chat", "code"],
            ["summarize", "code", "sql"], ["sql", "sql", "chat"], ["code", "chat", "summarize"]]
with torch.no_grad():
    for names in requests:
        y = serve(torch.randn(3, 32), names)
print(tuple(y.shape))
