# nn.Embedding with padding_idx=0 and a masked mean over the non-padding tokens (a bag of words
# classifier); the padding row gets no gradient.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(68)
embed = torch.nn.Embedding(25, 8, padding_idx=0).to(device)
classifier = torch.nn.Linear(8, 2).to(device)
params = list(embed.parameters()) + list(classifier.parameters())
opt = torch.optim.Adagrad(params, lr=0.1)
for step in range(8):
    tokens = torch.randint(1, 25, (5, 7))
    for row in range(5):
        tokens[row, 3 + (row + step) % 4:] = 0
    labels = torch.randint(0, 2, (5,))
    tokens, labels = tokens.to(device), labels.to(device)
    mask = (tokens != 0).unsqueeze(-1).float()
    bag = (embed(tokens) * mask).sum(1) / mask.sum(1).clamp(min=1.0)
    loss = torch.nn.functional.cross_entropy(classifier(bag), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
print("loss", loss.item(), "padding row norm", embed.weight[0].norm().item())
