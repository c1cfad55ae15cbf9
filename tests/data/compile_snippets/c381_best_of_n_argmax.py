"""Best-of-N sampling with a reward model, as in rejection-sampling fine-tuning data collection.

For each prompt the policy samples N short continuations; a small reward model scores them as one
stacked batch and the reranker keeps the highest-scoring continuation with `argmax` and `index_select`.
The whole `best_of_n` method is compiled; the kept continuations become the next fine-tuning batch.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
VOCAB, DIM, NEW_TOKENS, N = 100, 32, 6, 4


class TinyPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, ids):
        return self.head(self.embed(ids).cumsum(1) / (torch.arange(ids.shape[1]) + 1).unsqueeze(-1))


class RewardModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.score = nn.Linear(DIM, 1)

    def forward(self, ids):
        return self.score(self.embed(ids).mean(1)).squeeze(-1)


class BestOfN(nn.Module):
    def __init__(self, policy, reward):
        super().__init__()
        self.policy, self.reward = policy, reward

    def sample(self, prompt):
        ids = prompt
        for _ in range(NEW_TOKENS):
            probs = self.policy(ids)[:, -1].softmax(-1)
            ids = torch.cat([ids, torch.multinomial(probs, 1)], dim=1)
        return ids

    @torch.no_grad()
    def best_of_n(self, prompt):
        candidates = torch.cat([self.sample(prompt) for _ in range(N)])
        best = self.reward(candidates).argmax(dim=0, keepdim=True)
        return candidates.index_select(0, best)


sampler = BestOfN(TinyPolicy(), RewardModel())
sampler.best_of_n = torch.compile(sampler.best_of_n)
kept = [sampler.best_of_n(torch.randint(0, VOCAB, (1, 5))) for _ in range(3)]
print([k.shape for k in kept])
