# nanoGPT's batch maker: a CPU torch.randint indexes a numpy memmap, rows stacked on the host.
import os
import tempfile

import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
path = os.path.join(tempfile.mkdtemp(), "train.bin")
np.arange(4096, dtype=np.uint16).tofile(path)
data = np.memmap(path, dtype=np.uint16, mode="r")
block, batch = 16, 4
emb = torch.nn.Embedding(4096, 8).to(device)


def get_batch():
    ix = torch.randint(len(data) - block, (batch,))
    x = torch.stack([torch.from_numpy(data[i:i + block].astype(np.int64)) for i in ix])
    return x.to(device)


for step in range(6):
    out = emb(get_batch()).sum()
    xm.mark_step()
print(out.item())
