import torch
import torch.nn.functional as F

torch.manual_seed(0)

IGNORE = -100


@torch.compile
def masked_token_loss(logits, labels):
    valid = labels != IGNORE
    safe_labels = torch.where(valid, labels, torch.zeros_like(labels))
    per_token = F.cross_entropy(logits.flatten(0, 1), safe_labels.flatten(), reduction="none")
    per_token = torch.where(valid.flatten(), per_token, torch.zeros_like(per_token))
    return per_token.sum() / valid.sum().clamp(min=1)


for _ in range(5):
    labels = torch.randint(0, 20, (4, 12))
    labels[:, 9:] = IGNORE
    loss = masked_token_loss(torch.randn(4, 12, 20), labels)
print(loss)
