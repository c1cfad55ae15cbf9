import torch
import torch.nn as nn

torch.manual_seed(0)
EOS = 3

vocab = ["<pad>", "<s>", "</s>", "<eos>"] + [f"w{i}" for i in range(36)]
proj = nn.Linear(16, len(vocab))


@torch.compile
def decode_step(hidden):
    logits = proj(hidden)
    ids = logits.argmax(dim=-1).tolist()
    words = [vocab[i] for i in ids if i != EOS]
    return logits, words


with torch.no_grad():
    for _ in range(3):
        logits, words = decode_step(torch.randn(5, 16))
        print(" ".join(words))
