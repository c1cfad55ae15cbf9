# Causal-LM fine-tuning on PyTorch/XLA with gradient accumulation. So that every token weighs
# the same across micro-batches, the loop counts the target tokens of the accumulated batch and
# hands the compiled step a reduction lambda that divides the summed loss by that count.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla

torch.manual_seed(0)

PAD = 0
ACCUM = 2


class TinyLM(nn.Module):
    def __init__(self, vocab=128, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.Linear(dim, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        return self.lm_head(torch.tanh(self.mix(self.embed(input_ids))))


device = torch_xla.device()
model = TinyLM().to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


def micro_step(input_ids, labels, reduce_loss):
    logits = model(input_ids)
    per_token = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=PAD, reduction="none")
    return reduce_loss(per_token)


step_fn = torch_xla.compile(micro_step)


def make_micro_batch():
    lengths = torch.randint(4, 16, (4,))
    ids = torch.randint(1, 128, (4, 16))
    ids[torch.arange(16)[None, :] >= lengths[:, None]] = PAD
    return ids[:, :-1], ids[:, 1:]


for update in range(6):
    micro_batches = [make_micro_batch() for _ in range(ACCUM)]
    num_tokens = sum(int((labels != PAD).sum()) for _, labels in micro_batches)
    for input_ids, labels in micro_batches:
        loss = step_fn(input_ids.to(device), labels.to(device), lambda per_token: per_token.sum() / num_tokens)
        loss.backward()
    opt.step()
    opt.zero_grad()
    torch_xla.sync()
print(loss.item())
