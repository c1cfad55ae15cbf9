"""Online ranking service on Gaudi running an A/B experiment on the scoring temperature.

Each request carries a user id string. The compiled scoring method assigns the user to the
control or treatment arm with a stable hash of the id (MD5, as experiment frameworks do so that
a user always lands in the same arm), and the treatment arm sharpens the item scores.
"""
import hashlib

import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core as htcore  # Gaudi software stack: registers "hpu_backend"
except ImportError:  # CPU-only machine: same code, no step markers
    htcore = None

torch.manual_seed(0)
TREATMENT_SHARE = 0.5


def experiment_arm(user_id, salt="ranker-temp-v2"):
    digest = hashlib.md5(f"{salt}:{user_id}".encode()).hexdigest()
    return "treatment" if int(digest[:8], 16) / 0xFFFFFFFF < TREATMENT_SHARE else "control"


class Ranker(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.user = nn.Linear(dim, dim)
        self.item = nn.Linear(dim, dim)

    def score(self, user_feats, item_feats, user_id):
        scores = self.item(item_feats) @ self.user(user_feats)
        temperature = 0.5 if experiment_arm(user_id) == "treatment" else 1.0
        return (scores / temperature).softmax(-1)


ranker = Ranker().eval()
ranker.score = torch.compile(ranker.score, backend="hpu_backend" if htcore else "eager")

with torch.no_grad():
    for user_id in ["u-1041", "u-2290", "u-3177", "u-4003", "u-5120"]:
        probs = ranker.score(torch.randn(32), torch.randn(20, 32), user_id)
        if htcore:
            htcore.mark_step()
print(probs.shape)
