"""A training script in the style of nanoGPT's train.py, as run on a Gaudi with --device=hpu.

No step markers; batches cut from a numpy memmap by a host torch.randint; the loss logged with
loss.item() every iteration; a cosine learning-rate schedule written into the param groups;
AdamW, gradient accumulation, gradient clipping; an evaluation of both splits every
eval_interval iterations. Options as nanoGPT takes them: --key=value.

    python train.py --device=hpu --max_iters=6
"""
# calibrate-args: --device=xla
import math
import os
import sys
import tempfile
import time
from contextlib import nullcontext

import numpy as np
import torch

from model import GPT, GPTConfig

# -----------------------------------------------------------------------------
out_dir = ""  # empty: a temporary folder
eval_interval = 5
log_interval = 1
eval_iters = 4
gradient_accumulation_steps = 2
batch_size = 4
block_size = 32
n_layer, n_head, n_embd = 2, 4, 64
dropout = 0.0
learning_rate = 1e-3
max_iters = 6
weight_decay = 1e-1
beta1, beta2 = 0.9, 0.95
grad_clip = 1.0
decay_lr = True
warmup_iters = 2
lr_decay_iters = 6
min_lr = 1e-4
device = "cpu"
dtype = "float32"
seed = 1337
# -----------------------------------------------------------------------------
for arg in sys.argv[1:]:  # nanoGPT's configurator: --key=value overrides a global above
    key, _, value = arg[2:].partition("=")
    if key not in globals():
        raise SystemExit(f"unknown config key: {key}")
    old = globals()[key]
    globals()[key] = type(old)(value) if not isinstance(old, bool) else value == "True"

if "hpu" in device:
    import habana_frameworks.torch.core  # noqa: F401  (loads the HPU backend)
if "xla" in device:
    import torch_xla  # noqa: F401  (registers the xla device)

torch.manual_seed(seed)
device_type = "cuda" if "cuda" in device else "cpu"  # for torch.autocast, as nanoGPT does
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type)

# the dataset: token ids in a binary file, read through a memmap
data_dir = out_dir or tempfile.mkdtemp(prefix="nanogpt-")
vocab_size = 256
for split, n in (("train", 20000), ("val", 4000)):
    path = os.path.join(data_dir, f"{split}.bin")
    if not os.path.exists(path):
        np.random.default_rng(0).integers(0, vocab_size, n, dtype=np.uint16).tofile(path)


def get_batch(split):
    data = np.memmap(os.path.join(data_dir, f"{split}.bin"), dtype=np.uint16, mode="r")
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    x, y = x.to(device), y.to(device)
    return x, y


model = GPT(GPTConfig(block_size=block_size, vocab_size=vocab_size, n_layer=n_layer,
                      n_head=n_head, n_embd=n_embd, dropout=dropout))
model.to(device)
scaler = torch.amp.GradScaler("cpu", enabled=(dtype == "float16"))
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            with ctx:
                logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


X, Y = get_batch("train")
t0 = time.time()
iter_num = 0
best_val_loss = 1e9
while True:
    lr = get_lr(iter_num) if decay_lr else learning_rate
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    if iter_num % eval_interval == 0:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        best_val_loss = min(best_val_loss, float(losses["val"]))
    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch("train")
        scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    t1 = time.time()
    dt, t0 = t1 - t0, t1
    if iter_num % log_interval == 0:
        lossf = loss.item() * gradient_accumulation_steps
        print(f"iter {iter_num}: loss {lossf:.4f}, time {dt * 1000:.2f}ms")
    iter_num += 1
    if iter_num > max_iters:
        break
