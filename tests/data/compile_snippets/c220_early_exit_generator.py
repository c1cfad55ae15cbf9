"""Early-exit inference for a layered classifier: every layer has its own exit head, and the
forward stops at the first exit whose prediction is confident enough for the whole batch."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class EarlyExitClassifier(nn.Module):
    def __init__(self, dim=32, n_layers=6, n_classes=5, threshold=0.9):
        super().__init__()
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True)
                                    for _ in range(n_layers))
        self.exits = nn.ModuleList(nn.Linear(dim, n_classes) for _ in range(n_layers))
        self.threshold = threshold

    def exit_logits(self, x):
        for layer, head in zip(self.layers, self.exits):
            x = layer(x)
            yield head(x.mean(dim=1))

    def forward(self, x):
        for logits in self.exit_logits(x):
            if logits.softmax(-1).amax(-1).min() > self.threshold:
                break
        return logits


model = EarlyExitClassifier().eval()
cmodel = torch.compile(model, backend="openxla")
with torch.no_grad():
    for _ in range(4):
        preds = cmodel(torch.randn(8, 12, 32)).argmax(-1)
print("predictions", preds.tolist())
