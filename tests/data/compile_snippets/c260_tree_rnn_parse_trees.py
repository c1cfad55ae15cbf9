"""A recursive neural network for sentiment over binarized parse trees (Socher-style): each
sentence arrives as a nested tuple of word ids, and a module-level helper composes the two
children of every node bottom-up."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def compose(node, embed, combine):
    if isinstance(node, int):
        return embed(torch.tensor(node))
    left, right = node
    pair = torch.cat([compose(left, embed, combine), compose(right, embed, combine)])
    return torch.tanh(combine(pair))


class TreeSentiment(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.combine = nn.Linear(2 * dim, dim)
        self.classify = nn.Linear(dim, 2)

    def forward(self, tree):
        return self.classify(compose(tree, self.embed, self.combine))


treebank = [
    ((3, 7), 9),
    (3, (7, 9)),
    ((1, 2), (3, 4)),
    (((1, 2), 3), 4),
    (5, ((6, 7), 8)),
    ((4, (5, 6)), (7, 8)),
    (1, (2, (3, (4, 5)))),
    ((((1, 2), 3), 4), 5),
    ((2, 3), ((4, 5), (6, 7))),
]
labels = torch.randint(0, 2, (len(treebank),))
model = TreeSentiment()
forward = torch.compile(model)
opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
for tree, label in zip(treebank, labels):
    loss = nn.functional.cross_entropy(forward(tree).unsqueeze(0), label.unsqueeze(0))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(float(loss))
