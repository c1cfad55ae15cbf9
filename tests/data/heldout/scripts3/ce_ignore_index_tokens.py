# Token-level cross-entropy where padded targets are -100 (ignore_index), the loss read every
# fourth step; the number of ignored positions changes from batch to batch but not the shapes.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(62)
model = torch.nn.Sequential(torch.nn.Embedding(30, 16), torch.nn.Linear(16, 30)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(10):
    tokens = torch.randint(0, 30, (6, 10))
    targets = torch.roll(tokens, -1, dims=1)
    cut = 4 + step % 5
    targets[:, cut:] = -100
    tokens, targets = tokens.to(device), targets.to(device)
    logits = model(tokens)
    loss = torch.nn.functional.cross_entropy(logits.view(-1, 30), targets.view(-1),
                                             ignore_index=-100)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    if step % 4 == 3:
        print(f"step {step}: loss {loss.item():.4f}")
