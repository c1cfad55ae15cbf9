"""Masked-language-model pre-training on length-sorted batches: the compiled loss masks
`round(0.15 * seq_len)` random positions of each batch (at least one), replaces them with the mask
token and scores the model's predictions there."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, MASK_ID = 100, 99


class TinyMLM(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.mix = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True, dropout=0.0)
        self.lm_head = nn.Linear(dim, VOCAB)

    def forward(self, ids):
        return self.lm_head(self.mix(self.embed(ids)))


model = TinyMLM()


@torch.compile
def mlm_loss(ids, mask_prob=0.15):
    seq_len = ids.shape[1]
    n_mask = max(1, round(mask_prob * seq_len))
    positions = torch.randperm(seq_len)[:n_mask]
    corrupted = ids.clone()
    corrupted[:, positions] = MASK_ID
    logits = model(corrupted)[:, positions]
    return F.cross_entropy(logits.reshape(-1, VOCAB), ids[:, positions].reshape(-1))


opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for seq_len in (24, 31, 40, 52, 67, 18):
    ids = torch.randint(0, VOCAB - 1, (4, seq_len))
    loss = mlm_loss(ids)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
