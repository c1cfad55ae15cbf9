"""Source snippets several test modules lint, fix or run as files."""

# a training loop that reads the loss on the host every step: HPU005 at 9:15
HAZARD = """\
import torch


def train(model, loader, optimizer):
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(loss.item())
"""

# a Gaudi training loop with no mark_step: HPU004 at 6:5, fixable
GAUDI_LOOP = """\
import torch
import habana_frameworks.torch.core as htcore


def train(model, loader, optimizer):
    for data, target in loader:
        optimizer.zero_grad()
        loss = model(data).sum()
        loss.backward()
        optimizer.step()
"""
