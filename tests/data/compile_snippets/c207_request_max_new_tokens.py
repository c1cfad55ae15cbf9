"""Small serving endpoint: the whole greedy decode of a request is one compiled function, and each
request says how many new tokens it wants."""
import torch
import torch.nn as nn

torch.manual_seed(0)
VOCAB = 40


class TinyLM(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.rnn_cell = nn.Linear(2 * dim, dim)
        self.out = nn.Linear(dim, VOCAB)

    def step(self, token, state):
        state = torch.tanh(self.rnn_cell(torch.cat([self.embed(token), state], dim=-1)))
        return self.out(state), state


model = TinyLM().eval()


@torch.no_grad()
def generate(first_token, max_new_tokens):
    state = torch.zeros(first_token.shape[0], 32)
    token, out = first_token, []
    for _ in range(max_new_tokens):
        logits, state = model.step(token, state)
        token = logits.argmax(-1)
        out.append(token)
    return torch.stack(out, dim=1)


cgenerate = torch.compile(generate)
for req in [{"max_new_tokens": 8}, {"max_new_tokens": 16}, {"max_new_tokens": 12},
            {"max_new_tokens": 20}, {"max_new_tokens": 5}, {"max_new_tokens": 9}]:
    tokens = cgenerate(torch.randint(0, VOCAB, (2,)), req["max_new_tokens"])
print(tuple(tokens.shape))
