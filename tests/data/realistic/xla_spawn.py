"""A data-parallel training script launched with ``xmp.spawn`` (one process per device).

Each process builds its model, shards the fake dataset by ``xr.global_ordinal()``, averages
gradients with ``xm.optimizer_step`` and saves a checkpoint with ``xm.save`` from the master.

    python xla_spawn.py --steps 5
"""
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr


def _mp_fn(index, args):
    device = torch_xla.device()
    torch.manual_seed(index)
    world, rank = xr.world_size(), xr.global_ordinal()
    data = torch.randn(args.steps * world, 4, 10)
    target = torch.randint(0, 3, (args.steps * world, 4))
    shard = [(data[i], target[i]) for i in range(rank, len(data), world)]
    model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 3)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    for x, y in pl.MpDeviceLoader(shard, device):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        xm.optimizer_step(optimizer)
        scheduler.step()
    if xm.is_master_ordinal():
        path = os.path.join(tempfile.mkdtemp(), "model.pt")
        xm.save(model.state_dict(), path)
        xm.master_print(f"rank {rank} of {world}: saved, last loss {loss.item():.4f}")
    xm.rendezvous("done")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=5)
    xmp.spawn(_mp_fn, args=(p.parse_args(),))
