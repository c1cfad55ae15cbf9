"""Gradual unfreezing for fine-tuning (ULMFiT style): the optimizer is built with one parameter
group per block and one for the classifier, each learning rate a 0-d tensor, the frozen blocks'
at 0; at each later epoch the next block down is unfrozen by filling its group's learning rate
with a discounted value. Decoupled weight decay is applied after every step by a compiled helper that walks
`opt.param_groups`."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
blocks = nn.ModuleList(nn.Sequential(nn.Linear(32, 32), nn.GELU()) for _ in range(4))
classifier = nn.Linear(32, 3)
groups = [{"params": list(b.parameters()), "lr": torch.tensor(0.0)} for b in blocks]
head_group = {"params": list(classifier.parameters()), "lr": torch.tensor(0.05)}
opt = torch.optim.SGD(groups + [head_group], lr=torch.tensor(0.05))


@torch.compile
def decoupled_weight_decay(optimizer, wd):
    with torch.no_grad():
        for group in optimizer.param_groups:
            for p in group["params"]:
                p.mul_(1 - group["lr"] * wd)


def forward(x):
    for block in blocks:
        x = x + block(x)
    return classifier(x)


for epoch in range(4):
    if epoch > 0:
        opt.param_groups[len(blocks) - epoch]["lr"].fill_(0.05 / 2.6 ** epoch)
    for step in range(3):
        x, y = torch.randn(16, 32), torch.randint(0, 3, (16,))
        loss = F.cross_entropy(forward(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        decoupled_weight_decay(opt, 0.01)
    print(f"epoch {epoch} groups {len(opt.param_groups)} loss {loss.item():.4f}")
