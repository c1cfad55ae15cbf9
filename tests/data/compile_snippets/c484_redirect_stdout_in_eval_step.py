"""Speech-enhancement evaluation: the compiled `eval_step` denoises a batch and scores it with a
vendored `si_snr` helper that can print diagnostics; to keep the evaluation log clean, the step
calls the helper under `contextlib.redirect_stdout(io.StringIO())`."""
import contextlib
import io

import torch
import torch.nn as nn

torch.manual_seed(0)


def si_snr(estimate, target, eps=1e-8, verbose=False):
    target = target - target.mean(-1, keepdim=True)
    estimate = estimate - estimate.mean(-1, keepdim=True)
    scale = (estimate * target).sum(-1, keepdim=True) / (target.pow(2).sum(-1, keepdim=True) + eps)
    projection = scale * target
    noise = estimate - projection
    if verbose:
        print("si_snr: projection energy", projection.pow(2).sum(-1))
    return 10 * torch.log10(projection.pow(2).sum(-1) / (noise.pow(2).sum(-1) + eps) + eps)


class Denoiser(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(1, ch, 9, padding=4), nn.PReLU(),
                                 nn.Conv1d(ch, 1, 9, padding=4))

    def forward(self, noisy):
        return noisy - self.net(noisy.unsqueeze(1)).squeeze(1)


model = Denoiser().eval()


@torch.compile
def eval_step(noisy, clean):
    enhanced = model(noisy)
    with contextlib.redirect_stdout(io.StringIO()):
        score = si_snr(enhanced, clean)
    return score.mean()


with torch.no_grad():
    scores = []
    for batch in range(4):
        clean = torch.randn(4, 1600)
        scores.append(eval_step(clean + 0.3 * torch.randn_like(clean), clean))
print(f"SI-SNR {torch.stack(scores).mean().item():.2f} dB")
