# Two ways of zeroing the loss on padded positions: torch.where in the training step, boolean
# mask indexing in the metric that is printed every third step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(5)
pad_id = 0
vocab, seq = 20, 12
emb = torch.nn.Embedding(vocab, 16).to(device)
head = torch.nn.Linear(16, vocab).to(device)
opt = torch.optim.SGD(list(emb.parameters()) + list(head.parameters()), lr=0.2)

for step in range(9):
    tokens = torch.randint(1, vocab, (4, seq))
    lengths = torch.randint(6, seq + 1, (4,))
    tokens[torch.arange(seq)[None, :] >= lengths[:, None]] = pad_id
    tokens = tokens.to(device)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    logits = head(emb(inputs))
    per_token = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1),
                                                  reduction="none")
    not_pad = targets.reshape(-1) != pad_id
    loss = torch.where(not_pad, per_token, torch.zeros_like(per_token)).sum() / not_pad.sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    if step % 3 == 0:
        real_tokens = per_token.detach()[not_pad]
        print(step, "mean loss on real tokens", real_tokens.mean().item())
