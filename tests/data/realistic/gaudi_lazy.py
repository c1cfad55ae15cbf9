"""A Gaudi lazy-mode training script in the style of Habana's Model-References.

``htcore.mark_step()`` after ``backward()`` and after the optimizer step; ``hpex`` fused
optimizer and gradient clipping; the HPU device checks; a learning-rate warm-up written into the
parameter groups; the loss read every ``--log-every`` steps.

    python gaudi_lazy.py --steps 6
"""
import argparse

import habana_frameworks.torch.core as htcore
import habana_frameworks.torch.hpu as hthpu
import torch
import torch.nn as nn
from habana_frameworks.torch.hpex.normalization import FusedClipNorm
from habana_frameworks.torch.hpex.optimizers import FusedAdamW


def main(args):
    assert hthpu.is_available() and hthpu.device_count() >= 1
    device = torch.device("hpu")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 8))
    model.to(device)
    optimizer = FusedAdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    clip = FusedClipNorm(model.parameters(), 1.0)
    inputs = torch.randn(args.steps, 16, 32)
    labels = torch.randint(0, 8, (args.steps, 16))
    model.train()
    for step in range(args.steps):
        for group in optimizer.param_groups:
            group["lr"] = 1e-3 * min(1.0, (step + 1) / args.warmup)
        x, y = inputs[step].to(device), labels[step].to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        htcore.mark_step()
        clip.clip_norm(model.parameters())
        optimizer.step()
        htcore.mark_step()
        if step % args.log_every == 0:
            print(f"step {step} loss {loss.item():.4f}")
    hthpu.synchronize()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--log-every", type=int, default=2)
    main(p.parse_args())
