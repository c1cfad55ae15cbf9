"""XLA training of a click-through model: the collate function packs each batch into a
namedtuple it declares for the purpose, and the compiled step reads the fields by name."""
from collections import namedtuple

import torch
import torch.nn as nn

try:
    import torch_xla
    device = torch_xla.device()
    compile_step = torch_xla.compile
except ImportError:
    torch_xla, device = None, torch.device("cpu")
    compile_step = lambda f: torch.compile(f, backend="eager")

torch.manual_seed(0)


def collate(samples):
    Batch = namedtuple("Batch", ["dense", "item_ids", "clicked"])
    dense, ids, clicked = zip(*samples)
    return Batch(torch.stack(dense), torch.stack(ids), torch.stack(clicked))


class CTR(nn.Module):
    def __init__(self, n_items=100, dim=16):
        super().__init__()
        self.items = nn.Embedding(n_items, dim)
        self.mlp = nn.Sequential(nn.Linear(dim + 8, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, dense, item_ids):
        return self.mlp(torch.cat([dense, self.items(item_ids)], -1)).squeeze(-1)


model = CTR().to(device)
opt = torch.optim.Adagrad(model.parameters(), lr=0.05)


def compute_loss(batch):
    logits = model(batch.dense, batch.item_ids)
    return nn.functional.binary_cross_entropy_with_logits(logits, batch.clicked)


loss_fn = compile_step(compute_loss)
for it in range(10):
    samples = [(torch.randn(8), torch.randint(0, 100, ()), torch.rand(()).round())
               for _ in range(16)]
    loss = loss_fn(collate(samples))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
