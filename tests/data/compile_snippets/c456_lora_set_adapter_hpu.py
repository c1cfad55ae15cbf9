"""Gaudi (`hpu_backend`) multi-tenant serving with PEFT-style LoRA adapters: each layer keeps one
adapter per customer in `nn.ModuleDict`s, `set_adapter(name)` records the active one on every
layer, and the router sets the customer's adapter before the compiled model serves the batch."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi stack
    htcore = None
    BACKEND = "eager"

torch.manual_seed(0)


class LoraLinear(nn.Module):
    def __init__(self, dim, adapters, rank=4, alpha=8):
        super().__init__()
        self.base = nn.Linear(dim, dim)
        self.lora_A = nn.ModuleDict({n: nn.Linear(dim, rank, bias=False) for n in adapters})
        self.lora_B = nn.ModuleDict({n: nn.Linear(rank, dim, bias=False) for n in adapters})
        self.scaling = alpha / rank
        self.active_adapter = adapters[0]

    def forward(self, x):
        name = self.active_adapter
        return self.base(x) + self.lora_B[name](self.lora_A[name](x)) * self.scaling


class TicketClassifier(nn.Module):
    def __init__(self, adapters, dim=32, classes=5):
        super().__init__()
        self.blocks = nn.ModuleList(LoraLinear(dim, adapters) for _ in range(2))
        self.head = nn.Linear(dim, classes)

    def set_adapter(self, name):
        for block in self.blocks:
            block.active_adapter = name

    def forward(self, x):
        for block in self.blocks:
            x = F.gelu(block(x))
        return self.head(x)


ADAPTERS = ["retail", "legal", "medical"]
model = TicketClassifier(ADAPTERS).eval()
serve = torch.compile(model, backend=BACKEND)
requests = [("retail", 4), ("legal", 4), ("medical", 4), ("retail", 4), ("legal", 4)]
with torch.no_grad():
    for customer, batch in requests:
        model.set_adapter(customer)
        probs = serve(torch.randn(batch, 32)).softmax(-1)
        if htcore is not None:
            htcore.mark_step()
        print(customer, probs.argmax(-1).tolist())
