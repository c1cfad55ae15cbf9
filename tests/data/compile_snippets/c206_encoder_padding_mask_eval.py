"""Batch inference with a stock nn.TransformerEncoder text classifier: padded batches come with a
key padding mask and the model is run under eval() and no_grad, the way it is served."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class TextClassifier(nn.Module):
    def __init__(self, vocab=100, dim=32, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        layer = nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=64, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids, pad_mask):
        h = self.encoder(self.embed(ids), src_key_padding_mask=pad_mask)
        keep = (~pad_mask).unsqueeze(-1).float()
        return self.head((h * keep).sum(1) / keep.sum(1))


model = TextClassifier().eval()
cmodel = torch.compile(model)
with torch.no_grad():
    for _ in range(4):
        lengths = torch.randint(3, 11, (4,))
        pad_mask = torch.arange(10)[None, :] >= lengths[:, None]
        ids = torch.randint(1, 100, (4, 10)).masked_fill(pad_mask, 0)
        preds = cmodel(ids, pad_mask).argmax(-1)
print(preds.tolist())
