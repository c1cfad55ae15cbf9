"""Greedy CTC decoding in a speech recognizer's torch_xla.compile'd inference step: the step
takes the best class per frame with argmax and merges repeated frames with
`torch.unique_consecutive`, and the host then drops the blanks and maps ids to characters."""
import torch
import torch.nn as nn
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
    best = model(mels)[0].argmax(-1)
    return torch.unique_consecutive(best)


decode = torch_xla.compile(greedy_step)
with torch.no_grad():
    for frames in (40, 40, 40):
        ids = decode(torch.randn(1, 20, frames))
        torch_xla.sync()
        text = "".join(VOCAB[i] for i in ids.tolist() if i != BLANK)
print(repr(text))
