"""A small decoder-only language model trained the way PyTorch/XLA's examples train theirs.

Fake token batches from ``xu.SampleGenerator`` through ``MpDeviceLoader``; the step function
(forward, loss, backward, Adam) compiled with ``torch_xla.compile(full_graph=True)``; a
``RateTracker``; the loss logged from a step closure every ``--log-steps`` steps.

    python xla_decoder_only.py --num-steps 6
"""
import argparse
import itertools

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.utils.utils as xu
from torch_xla import runtime as xr


class Block(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.up, self.down = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.down(nn.functional.silu(self.up(self.norm2(x))))


class Decoder(nn.Module):
    def __init__(self, vocab, dim, layers, heads, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, hidden) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class Trainer:
    def __init__(self, args):
        self.args = args
        self.device = torch_xla.device()
        loader = xu.SampleGenerator(
            data=(torch.zeros(args.batch_size, args.seq_len, dtype=torch.int64),
                  torch.zeros(args.batch_size, args.seq_len, dtype=torch.int64)),
            sample_count=1000)
        self.loader = pl.MpDeviceLoader(loader, self.device)
        self.model = Decoder(args.vocab, args.dim, args.layers, 4, 2 * args.dim).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.loss_fn = nn.CrossEntropyLoss()
        self.step = torch_xla.compile(self.step_fn, full_graph=True, name="decoder_step")

    def step_fn(self, data, target):
        self.optimizer.zero_grad()
        logits = self.model(data)
        loss = self.loss_fn(logits.view(-1, self.args.vocab), target.view(-1))
        loss.backward()
        self.optimizer.step()
        return loss

    def log(self, step, loss, tracker):
        print(f"step {step} loss {loss.item():.4f} rate {tracker.rate():.1f} "
              f"world {xr.world_size()}")

    def train(self):
        tracker = xm.RateTracker()
        self.model.train()
        for step, (data, target) in enumerate(itertools.islice(self.loader, self.args.num_steps)):
            loss = self.step(data, target)
            tracker.add(self.args.batch_size)
            if step % self.args.log_steps == 0:
                xm.add_step_closure(self.log, args=(step, loss, tracker))
        xm.wait_device_ops()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--num-steps", type=int, default=6)
    p.add_argument("--log-steps", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=2)
    p.add_argument("--seq-len", type=int, default=16)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--layers", type=int, default=2)
    torch.manual_seed(0)
    Trainer(p.parse_args()).train()
