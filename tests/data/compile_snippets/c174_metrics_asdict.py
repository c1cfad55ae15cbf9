"""Contrastive (CLIP-style) training step that gathers its metrics in a dataclass and
converts it to a plain dict for the experiment logger before returning; Gaudi graph
backend when available."""
import dataclasses

import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core  # noqa: F401
    BACKEND = "hpu_backend"
except ImportError:
    BACKEND = "inductor"

torch.manual_seed(0)


@dataclasses.dataclass
class Metrics:
    loss: torch.Tensor
    i2t_acc: torch.Tensor
    logit_scale: torch.Tensor


img_proj, txt_proj = nn.Linear(20, 16), nn.Linear(12, 16)
logit_scale = nn.Parameter(torch.tensor(2.0))


@torch.compile(backend=BACKEND)
def contrastive_step(img, txt):
    a = nn.functional.normalize(img_proj(img), dim=-1)
    b = nn.functional.normalize(txt_proj(txt), dim=-1)
    logits = logit_scale.exp() * a @ b.T
    labels = torch.arange(a.shape[0])
    loss = (nn.functional.cross_entropy(logits, labels) + nn.functional.cross_entropy(logits.T, labels)) / 2
    m = Metrics(loss.detach(), (logits.argmax(-1) == labels).float().mean(), logit_scale.detach())
    return loss, dataclasses.asdict(m)


opt = torch.optim.AdamW([*img_proj.parameters(), *txt_proj.parameters(), logit_scale], lr=1e-3)
for _ in range(3):
    loss, log = contrastive_step(torch.randn(8, 20), torch.randn(8, 12))
    opt.zero_grad()
    loss.backward()
    opt.step()
print(sorted(log))
