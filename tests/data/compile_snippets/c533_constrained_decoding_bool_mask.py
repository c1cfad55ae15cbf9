"""`torch_xla.compile` constrained decoding for structured output: at each step the compiled
`next_token` masks the tokens the grammar forbids after the previous token with an in-place
boolean assignment, `logits[forbidden] = float("-inf")`, before the temperature and a greedy
pick."""
import torch
import torch.nn as nn

try:
    import torch_xla
    xla_compile, device = torch_xla.compile, torch_xla.device()
except ImportError:  # CPU run without torch_xla
    torch_xla, xla_compile, device = None, torch.compile, torch.device("cpu")

torch.manual_seed(0)
VOCAB, DIM = 40, 32
embed = nn.Embedding(VOCAB, DIM).to(device)
rnn_cell = nn.Linear(2 * DIM, DIM).to(device)
lm_head = nn.Linear(DIM, VOCAB).to(device)
allowed_after = (torch.rand(VOCAB, VOCAB) > 0.7).to(device)
allowed_after[:, 0] = True


def next_token(state, prev, temperature):
    state = torch.tanh(rnn_cell(torch.cat([state, embed(prev)], dim=-1)))
    logits = lm_head(state)
    forbidden = ~allowed_after[prev]
    logits[forbidden] = float("-inf")
    return state, (logits / temperature).argmax(dim=-1)


step = xla_compile(next_token)
with torch.no_grad():
    state = torch.zeros(4, DIM, device=device)
    tokens = [torch.randint(1, VOCAB, (4,), device=device)]
    for t in range(8):
        state, nxt = step(state, tokens[-1], 0.8)
        tokens.append(nxt)
        if torch_xla is not None:
            torch_xla.sync()
print(torch.stack(tokens, dim=1).tolist()[0])
