import torch
import torch.nn as nn

torch.manual_seed(0)

encoder = nn.Linear(12, 6)


@torch.compile
def encode(batch):
    if isinstance(batch, dict):
        x = batch["features"]
    elif isinstance(batch, (list, tuple)):
        x = batch[0]
    else:
        x = batch
    return encoder(x).relu()


x = torch.randn(5, 12)
for batch in (x, (x, torch.zeros(5)), {"features": x, "ids": torch.arange(5)}, [x], x):
    out = encode(batch)
print(out.shape)
