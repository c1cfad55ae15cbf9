"""FastSpeech-style acoustic model on Gaudi: a variance adaptor predicts a duration per phoneme
and its length regulator expands each phoneme's hidden state to that many mel frames with
torch.repeat_interleave, inside the compiled forward."""
import torch
import torch.nn as nn
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)


class VarianceAdaptor(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.duration = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 1))

    def predict_durations(self, h):
        log_d = self.duration(h).squeeze(-1)
        return torch.clamp(torch.round(torch.exp(log_d)), min=1).long()

    def length_regulate(self, h, durations):
        return torch.repeat_interleave(h, durations, dim=0)


class TinyFastSpeech(nn.Module):
    def __init__(self, vocab=40, dim=16, n_mels=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.adaptor = VarianceAdaptor(dim)
        self.to_mel = nn.Linear(dim, n_mels)

    def forward(self, phonemes):
        h = self.embed(phonemes)
        durations = self.adaptor.predict_durations(h)
        frames = self.adaptor.length_regulate(h, durations)
        return self.to_mel(frames)


model = torch.compile(TinyFastSpeech().eval(), backend="hpu_backend")
with torch.no_grad():
    for n in (12, 12, 12):
        mel = model(torch.randint(0, 40, (n,)))
        htcore.mark_step()
print(mel.shape)
