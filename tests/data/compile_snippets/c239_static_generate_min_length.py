"""Static-shape generation: the prompt is copied into a token buffer of the maximum length, the
current length is a device tensor, and the compiled decode step masks the end-of-sequence token
until a minimum length, samples at a fixed temperature and writes the token at the current
position."""
import torch
import torch.nn as nn

torch.manual_seed(0)


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
MAX_LEN, MIN_LEN, EOS = 16, 10, 0


@torch.compile
def decode_step(tokens, cur_len):
    logits = model(tokens)
    scores = logits.gather(1, (cur_len - 1).view(1, 1, 1).expand(tokens.shape[0], 1, logits.shape[-1]))[:, 0]
    eos_mask = torch.zeros_like(scores, dtype=torch.bool)
    eos_mask[:, EOS] = True
    scores = torch.where(eos_mask & (cur_len < MIN_LEN), -float("inf"), scores)
    nxt = torch.multinomial((scores / 0.8).softmax(-1), 1)
    tokens = tokens.scatter(1, cur_len.view(1, 1).expand(tokens.shape[0], 1), nxt)
    return tokens, cur_len + 1


prompt = torch.randint(1, 64, (2, 4))
tokens = torch.zeros(2, MAX_LEN, dtype=torch.long)
tokens[:, :4] = prompt
cur_len = torch.tensor(4)
with torch.no_grad():
    for _ in range(MAX_LEN - prompt.shape[1]):
        tokens, cur_len = decode_step(tokens, cur_len)
print(tokens)
