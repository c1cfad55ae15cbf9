import torch

torch.manual_seed(0)
banned = torch.zeros(50, dtype=torch.bool)
banned[[0, 2, 7]] = True


@torch.compile
def constrained_logits(logits, banned, prev_token):
    logits = logits.clone()
    logits[:, banned] = float("-inf")
    repeat = torch.nn.functional.one_hot(prev_token, logits.shape[-1]).bool()
    logits[repeat] = -1e4
    return torch.log_softmax(logits, dim=-1)


prev = torch.randint(3, 50, (4,))
for _ in range(5):
    out = constrained_logits(torch.randn(4, 50), banned, prev)
    prev = out.argmax(-1)
print(prev)
