"""Eager mode on PyTorch/XLA: every op runs (and is compiled once per signature) as it is called.

``--compile-step`` compiles the training step with ``torch_xla.compile`` while data preparation
stays eager, as PyTorch/XLA's eager-with-compile example does.

    python xla_eager.py --steps 4
    python xla_eager.py --steps 4 --compile-step
"""
# calibrate-args:
# calibrate-args: --compile-step
import argparse

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm


def main(args):
    torch_xla.experimental.eager_mode(True)
    device = torch_xla.device()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    def step_fn(x, y):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = torch_xla.compile(step_fn) if args.compile_step else step_fn
    for i in range(args.steps):
        x = torch.randn(8, 16).to(device) * 2.0
        y = torch.randint(0, 4, (8,)).to(device)
        loss = step(x, y)
        if i % 2 == 0:
            print(f"step {i} loss {loss.item():.4f}")
    xm.wait_device_ops()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--compile-step", action="store_true")
    main(p.parse_args())
