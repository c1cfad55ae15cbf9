# A tiny transformer encoder classifier: sequences of two lengths padded to 12, the key padding
# mask built on the host from the lengths and moved with the batch, mean pooling over real tokens.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(61)
VOCAB, DIM, SEQ = 40, 16, 12


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, DIM)
        layer = torch.nn.TransformerEncoderLayer(DIM, nhead=2, dim_feedforward=32, dropout=0.0,
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
        self.head = torch.nn.Linear(DIM, 3)

    def forward(self, tokens, pad_mask):
        h = self.encoder(self.embed(tokens), src_key_padding_mask=pad_mask)
        keep = (~pad_mask).unsqueeze(-1).float()
        pooled = (h * keep).sum(1) / keep.sum(1)
        return self.head(pooled)


model = Encoder().to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(6):
    lengths = [12, 7, 9, 12] if step % 2 == 0 else [5, 12, 12, 8]
    tokens = torch.randint(1, VOCAB, (4, SEQ))
    pad_mask = torch.arange(SEQ)[None, :] >= torch.tensor(lengths)[:, None]
    tokens[pad_mask] = 0
    labels = torch.randint(0, 3, (4,))
    tokens, pad_mask, labels = tokens.to(device), pad_mask.to(device), labels.to(device)
    loss = torch.nn.functional.cross_entropy(model(tokens, pad_mask), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
print("last loss", loss.item())
