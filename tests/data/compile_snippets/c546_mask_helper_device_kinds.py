"""A decoder project's shared attention-bias helper, compiled once: it builds the causal plus
key-padding bias for a batch of sequence lengths on the `device` it is given. The offline scoring
job passes `tokens.device`, the evaluation script passes the config's device string (`"cpu"`) and
the generation server leaves the argument at its default (`None`)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM, HEADS = 256, 64, 4


@torch.compile
def attention_bias(lengths, seq_len, device=None):
    pos = torch.arange(seq_len, device=device)
    causal = pos[None, :] <= pos[:, None]
    padded = pos[None, :] < lengths.to(device)[:, None]
    allowed = causal[None] & padded[:, None, :]
    return torch.zeros(allowed.shape, device=device).masked_fill(~allowed, float("-inf"))[:, None]


class TinyDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.out = nn.Linear(DIM, VOCAB)

    def forward(self, tokens, bias):
        b, n = tokens.shape
        q, k, v = self.qkv(self.embed(tokens)).view(b, n, 3, HEADS, -1).permute(2, 0, 3, 1, 4)
        h = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return self.out(h.transpose(1, 2).reshape(b, n, DIM))


model = TinyDecoder().eval()
config = {"device": "cpu"}
with torch.no_grad():
    tokens, lengths = torch.randint(0, VOCAB, (4, 16)), torch.tensor([16, 12, 9, 16])  # scoring job
    logits = model(tokens, attention_bias(lengths, 16, device=tokens.device))
    nll = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
    tokens = torch.randint(0, VOCAB, (4, 16))  # evaluation script
    val = model(tokens, attention_bias(torch.tensor([16, 16, 10, 7]), 16, device=config["device"]))
    prompts = torch.randint(0, VOCAB, (4, 16))  # generation server
    next_token = model(prompts, attention_bias(torch.tensor([16, 14, 16, 11]), 16))[:, -1].argmax(-1)
print(f"nll {nll.item():.4f} next {next_token.tolist()}")
