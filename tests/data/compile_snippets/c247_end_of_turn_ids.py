"""Chat-model greedy decoding: the compiled decode step returns the next token and whether it is one of
the model's end-of-turn ids (end of text, end of turn, end of message), kept as a plain Python
list next to the model."""
import torch
import torch.nn as nn

torch.manual_seed(0)
END_OF_TURN_IDS = [0, 1, 2]


class TinyChatLM(nn.Module):
    def __init__(self, vocab=64, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = torch.tanh(self.proj(self.embed(tokens).mean(1)))
        return self.lm_head(h)


model = TinyChatLM().eval()


@torch.compile
def decode_step(tokens):
    next_token = model(tokens).argmax(-1)
    finished = next_token[0] in END_OF_TURN_IDS
    return next_token, finished


tokens = torch.randint(3, 64, (1, 8))
results = []
with torch.no_grad():
    for _ in range(6):
        next_token, finished = decode_step(tokens)
        results.append((next_token, finished))
        tokens = torch.cat([tokens[:, 1:], next_token[:, None]], dim=1)
print(results[-1])
