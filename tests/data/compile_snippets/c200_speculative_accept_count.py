"""Speculative decoding: a small draft model proposes k tokens, the target model scores them in one
pass, and the verify step keeps the longest prefix the target agrees with plus its own next token."""
import torch
import torch.nn as nn

torch.manual_seed(0)
VOCAB = 50


class LM(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.out = nn.Linear(dim, VOCAB)

    def forward(self, ids):
        return self.out(torch.cumsum(self.embed(ids), dim=1))


draft, target = LM(16).eval(), LM(32).eval()


@torch.no_grad()
def verify(ids, draft_tokens):
    logits = target(torch.cat([ids, draft_tokens], dim=1))
    k = draft_tokens.shape[1]
    predicted = logits[:, -k - 1:].argmax(-1)
    agree = (predicted[:, :k] == draft_tokens).int().cumprod(dim=1)
    n_accepted = int(agree.sum())
    return torch.cat([draft_tokens[:, :n_accepted], predicted[:, n_accepted:n_accepted + 1]], dim=1)


cverify = torch.compile(verify)
ids = torch.randint(0, VOCAB, (1, 8))
for _ in range(4):
    proposal = ids
    with torch.no_grad():
        for _ in range(4):
            proposal = torch.cat([proposal, draft(proposal)[:, -1:].argmax(-1)], dim=1)
    ids = torch.cat([ids, cverify(ids, proposal[:, ids.shape[1]:])], dim=1)
print("generated", ids.shape[1], "tokens")
