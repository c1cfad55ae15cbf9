# A FastSpeech-style phoneme encoder trained on Gaudi. The collator pads each batch to its
# longest utterance and passes the true lengths; the encoder builds its key padding mask by
# comparing those lengths with the positions of the padded batch it was given.
import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn

torch.manual_seed(0)


def make_pad_mask(lengths, max_len):
    positions = torch.arange(max_len, device=lengths.device)
    return positions[None, :] >= lengths[:, None]


class PhonemeEncoder(nn.Module):
    def __init__(self, vocab=60, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.ffn = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, dim))
        self.duration = nn.Linear(dim, 1)

    def forward(self, phonemes, lengths):
        pad_mask = make_pad_mask(lengths, phonemes.shape[1])
        x = self.embed(phonemes)
        a, _ = self.attn(x, x, x, key_padding_mask=pad_mask, need_weights=False)
        x = x + a
        x = x + self.ffn(x)
        return self.duration(x).squeeze(-1).masked_fill(pad_mask, 0.0)


def collate(utterances):
    lengths = torch.tensor([len(u) for u in utterances])
    phonemes = torch.zeros(len(utterances), int(lengths.max()), dtype=torch.long)
    for i, u in enumerate(utterances):
        phonemes[i, : len(u)] = u
    return phonemes, lengths


model = PhonemeEncoder()
encoder = torch.compile(model, backend="hpu_backend")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(6):
    utterances = [torch.randint(1, 60, (int(n),)) for n in torch.randint(5, 20, (4,))]
    phonemes, lengths = collate(utterances)
    target = torch.rand(phonemes.shape) * (phonemes != 0)
    pred = encoder(phonemes, lengths)
    loss = (pred - target).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(loss.item())
