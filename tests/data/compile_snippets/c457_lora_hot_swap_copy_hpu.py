"""Gaudi (`hpu_backend`) multi-tenant serving with LoRA hot-swapping: each layer has a single LoRA
slot, the customers' adapters are kept as plain weight dicts, and `load_adapter(name)` copies the
customer's weights into the slots in place before the compiled model serves the batch."""
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
    def __init__(self, dim, rank=4, alpha=8):
        super().__init__()
        self.base = nn.Linear(dim, dim)
        self.lora_A = nn.Linear(dim, rank, bias=False)
        self.lora_B = nn.Linear(rank, dim, bias=False)
        self.scaling = alpha / rank

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scaling


class TicketClassifier(nn.Module):
    def __init__(self, dim=32, classes=5):
        super().__init__()
        self.blocks = nn.ModuleList(LoraLinear(dim) for _ in range(2))
        self.head = nn.Linear(dim, classes)

    @torch.no_grad()
    def load_adapter(self, weights):
        for block, (a, b) in zip(self.blocks, weights):
            block.lora_A.weight.copy_(a)
            block.lora_B.weight.copy_(b)

    def forward(self, x):
        for block in self.blocks:
            x = F.gelu(block(x))
        return self.head(x)


ADAPTERS = {name: [(torch.randn(4, 32) * 0.1, torch.randn(32, 4) * 0.1) for _ in range(2)]
            for name in ("retail", "legal", "medical")}
model = TicketClassifier().eval()
serve = torch.compile(model, backend=BACKEND)
requests = [("retail", 4), ("legal", 4), ("medical", 4), ("retail", 4), ("legal", 4)]
with torch.no_grad():
    for customer, batch in requests:
        model.load_adapter(ADAPTERS[customer])
        probs = serve(torch.randn(batch, 32)).softmax(-1)
        if htcore is not None:
            htcore.mark_step()
        print(customer, probs.argmax(-1).tolist())
