"""Hugging-Face-style classifier on PyTorch/XLA whose forward takes the whole batch dict: training
batches carry "labels" and get a loss back, evaluation batches have no labels and get predictions
back, from the same compiled function."""
import torch
import torch.nn as nn
import torch_xla

torch.manual_seed(0)
device = torch_xla.device()


class TextClassifier(nn.Module):
    def __init__(self, vocab=100, dim=32, classes=4):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, batch):
        logits = self.head(self.embed(batch["input_ids"]))
        if "labels" in batch:
            return {"loss": nn.functional.cross_entropy(logits, batch["labels"]), "logits": logits}
        return {"logits": logits, "predictions": logits.argmax(dim=-1)}


model = TextClassifier().to(device)
cmodel = torch.compile(model, backend="openxla")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(4):
    batch = {"input_ids": torch.randint(0, 100, (8, 12), device=device),
             "labels": torch.randint(0, 4, (8,), device=device)}
    out = cmodel(batch)
    out["loss"].backward()
    opt.step()
    opt.zero_grad()
    torch_xla.sync()

correct = 0
with torch.no_grad():
    for step in range(3):
        out = cmodel({"input_ids": torch.randint(0, 100, (8, 12), device=device)})
        correct += int((out["predictions"] == 0).sum())
print(f"eval logits {tuple(out['logits'].shape)}, class-0 predictions {correct}")
