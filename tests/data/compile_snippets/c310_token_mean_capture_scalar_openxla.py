# Masked-LM training on PyTorch/XLA where the loss is averaged over the number of masked
# tokens. The project turns on Dynamo's capture_scalar_outputs so that the token count read
# with .item() inside the compiled loss is kept in the graph.
import torch
import torch._dynamo
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm

torch._dynamo.config.capture_scalar_outputs = True
torch.manual_seed(0)

VOCAB, MASK_ID, IGNORE = 60, 3, -100
device = xm.xla_device()


class Encoder(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(dim, VOCAB)

    def forward(self, ids):
        return self.head(self.encoder(self.embed(ids)))


model = Encoder().to(device)


@torch.compile(backend="openxla")
def mlm_loss(ids, labels):
    logits = model(ids)
    summed = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE, reduction="sum")
    n_masked = (labels != IGNORE).sum().item()
    return summed / max(n_masked, 1)


opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    ids = torch.randint(4, VOCAB, (4, 16), device=device)
    mask = torch.rand(ids.shape, device=device) < 0.15
    labels = torch.where(mask, ids, torch.full_like(ids, IGNORE))
    loss = mlm_loss(ids.masked_fill(mask, MASK_ID), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    xm.mark_step()
print(loss.item())
