# A BERT-style sentence classifier fine-tuned with torch.compile. Like Hugging Face models, its
# forward checks whether the first or last token of a batch is the pad token when the caller did
# not pass an attention mask, to warn that padding will be attended to.
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SentenceClassifier(nn.Module):
    def __init__(self, vocab=200, dim=32, num_labels=3, pad_token_id=0):
        super().__init__()
        self.pad_token_id = pad_token_id
        self.embed = nn.Embedding(vocab, dim, padding_idx=pad_token_id)
        self.layer = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True)
        self.head = nn.Linear(dim, num_labels)

    def warn_if_padding_and_no_attention_mask(self, input_ids, attention_mask):
        if attention_mask is not None:
            return
        if self.pad_token_id in input_ids[:, [-1, 0]]:
            warnings.warn("Padding tokens found but no attention_mask was passed.")

    def forward(self, input_ids, attention_mask=None):
        self.warn_if_padding_and_no_attention_mask(input_ids, attention_mask)
        h = self.layer(self.embed(input_ids))
        return self.head(h.mean(dim=1))


model = SentenceClassifier()
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    input_ids = torch.randint(1, 200, (8, 16))
    labels = torch.randint(0, 3, (8,))
    loss = F.cross_entropy(compiled(input_ids), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
