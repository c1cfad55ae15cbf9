"""HF-style sampling: a small causal LM, a list of logits processors (minimum length, temperature,
top-k) applied to the next-token scores inside a compiled decode step, and a generate loop that
appends each sampled token to input_ids."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class MinLengthLogitsProcessor:
    def __init__(self, min_length, eos_token_id):
        self.min_length = min_length
        self.eos_token_id = eos_token_id

    def __call__(self, input_ids, scores):
        if input_ids.shape[-1] < self.min_length:
            scores[:, self.eos_token_id] = -float("inf")
        return scores


class TemperatureLogitsWarper:
    def __init__(self, temperature):
        self.temperature = temperature

    def __call__(self, input_ids, scores):
        return scores / self.temperature


class TopKLogitsWarper:
    def __init__(self, top_k):
        self.top_k = top_k

    def __call__(self, input_ids, scores):
        kth = torch.topk(scores, self.top_k).values[:, -1:]
        return scores.masked_fill(scores < kth, -float("inf"))


class TinyLM(nn.Module):
    def __init__(self, vocab=64, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.Linear(dim, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        h = self.embed(input_ids)
        ctx = h.cumsum(1) / torch.arange(1, h.shape[1] + 1).view(1, -1, 1)
        return self.lm_head(torch.tanh(self.mix(ctx)))


model = TinyLM().eval()
processors = [MinLengthLogitsProcessor(10, eos_token_id=0), TemperatureLogitsWarper(0.8),
              TopKLogitsWarper(8)]


@torch.compile
def decode_step(input_ids):
    scores = model(input_ids)[:, -1, :]
    for proc in processors:
        scores = proc(input_ids, scores)
    return torch.multinomial(scores.softmax(-1), 1)


input_ids = torch.randint(1, 64, (2, 4))
with torch.no_grad():
    for _ in range(12):
        input_ids = torch.cat([input_ids, decode_step(input_ids)], dim=-1)
print(input_ids.shape)
