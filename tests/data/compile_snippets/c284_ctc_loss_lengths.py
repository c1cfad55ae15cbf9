# A small CTC speech recognizer: a convolutional front end subsamples the filterbank frames by
# two, and a compiled loss function turns the frame lengths into output lengths and calls
# F.ctc_loss with the padded character targets and their lengths.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CTCRecognizer(nn.Module):
    def __init__(self, n_mels=20, dim=32, vocab=28):
        super().__init__()
        self.subsample = nn.Conv1d(n_mels, dim, kernel_size=3, stride=2, padding=1)
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, vocab))

    def forward(self, feats):
        h = self.subsample(feats.transpose(1, 2)).transpose(1, 2)
        return self.encoder(h).log_softmax(-1)


def ctc_loss(log_probs, targets, frame_lengths, target_lengths):
    out_lengths = (frame_lengths + 1) // 2
    return F.ctc_loss(log_probs.transpose(0, 1), targets, out_lengths, target_lengths, zero_infinity=True)


model = CTCRecognizer()
forward = torch.compile(model)
compute_loss = torch.compile(ctc_loss)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(4):
    feats = torch.randn(3, 40, 20)
    frame_lengths = torch.tensor([40, 36, 31])
    target_lengths = torch.tensor([9, 7, 5])
    targets = torch.randint(1, 28, (3, 9))
    loss = compute_loss(forward(feats), targets, frame_lengths, target_lengths)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
