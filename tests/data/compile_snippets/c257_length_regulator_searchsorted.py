"""FastSpeech-style length regulator for a fixed mel budget: durations are turned into frame
boundaries with cumsum, each of MAX_FRAMES output frames finds its phoneme with searchsorted,
and frames past the utterance's end are zeroed by a mask."""
import torch
import torch.nn as nn

torch.manual_seed(0)
MAX_FRAMES = 64


def regulate_fixed(h, durations, max_frames=MAX_FRAMES):
    ends = torch.cumsum(durations, dim=0)
    frame_ids = torch.arange(max_frames)
    owner = torch.searchsorted(ends, frame_ids, right=True).clamp(max=h.shape[0] - 1)
    frames = h.index_select(0, owner)
    valid = (frame_ids < ends[-1]).unsqueeze(-1)
    return frames * valid


class TinyFastSpeech(nn.Module):
    def __init__(self, vocab=40, dim=16, n_mels=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.duration = nn.Linear(dim, 1)
        self.to_mel = nn.Linear(dim, n_mels)

    def forward(self, phonemes):
        h = self.embed(phonemes)
        durations = torch.clamp(torch.round(torch.exp(self.duration(h).squeeze(-1))), 1, 4).long()
        return self.to_mel(regulate_fixed(h, durations))


model = torch.compile(TinyFastSpeech().eval())
with torch.no_grad():
    for _ in range(4):
        mel = model(torch.randint(0, 40, (12,)))
print(mel.shape)
