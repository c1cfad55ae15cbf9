"""Sentiment classifier over padded review batches: an LSTM encoder packs each batch by the true
review lengths (taken from the attention mask) so padding does not leak into the final state."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence

torch.manual_seed(0)


class ReviewClassifier(nn.Module):
    def __init__(self, vocab=200, dim=32, hidden=48, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, ids, attention_mask):
        lengths = attention_mask.sum(dim=1)
        packed = pack_padded_sequence(self.embed(ids), lengths, batch_first=True, enforce_sorted=False)
        _, (h_n, _) = self.lstm(packed)
        return self.head(h_n[-1])


def make_batch(batch=6, max_len=12):
    lengths = torch.randint(3, max_len + 1, (batch,))
    mask = (torch.arange(max_len)[None, :] < lengths[:, None]).long()
    ids = torch.randint(1, 200, (batch, max_len)) * mask
    return ids, mask, torch.randint(0, 3, (batch,))


model = ReviewClassifier()
cmodel = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(4):
    ids, mask, labels = make_batch()
    loss = nn.functional.cross_entropy(cmodel(ids, mask), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
