import torch

torch.manual_seed(0)

vocab = torch.nn.Embedding(50, 8)
head = torch.nn.Linear(8, 50)


@torch.compile
def greedy(tokens):
    logits = head(vocab(tokens))
    ids = logits.argmax(-1).tolist()
    return logits, ids


with torch.no_grad():
    for _ in range(3):
        greedy(torch.randint(0, 50, (1, 7)))
