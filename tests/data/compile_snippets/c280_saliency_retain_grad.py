# An interpretability pass over a compiled review classifier: gradient-times-input saliency per
# token. The wrapper keeps the embedding output around with retain_grad() so that its gradient
# can be read after backward().
import torch
import torch.nn as nn

torch.manual_seed(0)


class ReviewClassifier(nn.Module):
    def __init__(self, vocab=500, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 2)

    def forward(self, token_ids):
        return self.head(torch.tanh(self.encoder(self.embed(token_ids))).mean(dim=1))


class SaliencyWrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, token_ids, target):
        embeddings = self.model.embed(token_ids)
        embeddings.retain_grad()
        hidden = torch.tanh(self.model.encoder(embeddings)).mean(dim=1)
        logits = self.model.head(hidden)
        return logits.gather(1, target[:, None]).sum(), embeddings


explainer = torch.compile(SaliencyWrapper(ReviewClassifier()).eval())
for batch in range(4):
    token_ids = torch.randint(0, 500, (4, 20))
    target = torch.randint(0, 2, (4,))
    score, embeddings = explainer(token_ids, target)
    score.backward()
    saliency = (embeddings.grad * embeddings).sum(-1).abs()
print(saliency.argmax(dim=1))
