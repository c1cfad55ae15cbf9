"""Greedy CTC decoding in a speech recognizer's torch_xla.compile'd inference step, kept to a
fixed shape: the step takes the argmax per frame, marks a frame as kept when it differs from the
previous frame and is not blank, and returns the ids with -1 in the dropped frames; the host
compacts them and maps ids to characters."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla

torch.manual_seed(0)
VOCAB = "_abcdefgh '"
BLANK = 0


class Recognizer(nn.Module):
    def __init__(self, n_mels=20, hidden=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv1d(n_mels, hidden, 3, padding=1), nn.GELU(),
                                     nn.Conv1d(hidden, hidden, 3, padding=1), nn.GELU())
        self.classifier = nn.Linear(hidden, len(VOCAB))

    def forward(self, mels):
        h = self.encoder(mels).transpose(1, 2)
        return self.classifier(h).log_softmax(-1)


model = Recognizer().eval()


def greedy_step(mels):
    best = model(mels).argmax(-1)
    prev = F.pad(best[:, :-1], (1, 0), value=-1)
    keep = (best != prev) & (best != BLANK)
    return torch.where(keep, best, torch.full_like(best, -1))


decode = torch_xla.compile(greedy_step)
with torch.no_grad():
    for _ in range(3):
        ids = decode(torch.randn(2, 20, 40))
        torch_xla.sync()
        texts = ["".join(VOCAB[i] for i in row if i >= 0) for row in ids.tolist()]
print(texts)
