"""Multi-LoRA serving: the adapters' A and B matrices are stacked into two weight tensors and each
batched request carries an index tensor saying which adapter its rows should use."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class StackedLoRALinear(nn.Module):
    def __init__(self, dim=32, n_adapters=4, rank=4, alpha=8.0):
        super().__init__()
        self.base = nn.Linear(dim, dim)
        self.lora_A = nn.Parameter(torch.randn(n_adapters, dim, rank) * 0.02)
        self.lora_B = nn.Parameter(torch.randn(n_adapters, rank, dim) * 0.02)
        self.scale = alpha / rank

    def forward(self, x, adapter_ids):
        a = self.lora_A[adapter_ids]
        b = self.lora_B[adapter_ids]
        delta = torch.bmm(torch.bmm(x.unsqueeze(1), a), b).squeeze(1)
        return self.base(x) + delta * self.scale


ADAPTERS = {"sql": 0, "chat": 1, "code": 2, "summarize": 3}
layer = StackedLoRALinear().eval()
serve = torch.compile(layer)
requests = [["sql", "chat", "chat"], ["code", "sql", "summarize"], ["chat", "chat", "code"],
            ["summarize", "code", "sql"], ["sql", "sql", "chat"], ["code", "chat", "summarize"]]
with torch.no_grad():
    for names in requests:
        ids = torch.tensor([ADAPTERS[n] for n in names])
        y = serve(torch.randn(3, 32), ids)
print(tuple(y.shape))
