"""Gaudi (`hpu_backend`) scoring service whose clients post feature rows as raw little-endian
float32 bytes; the compiled handler turns the request body into a tensor with
`torch.frombuffer(body, dtype=torch.float32)`, reshapes it to rows of the model's width and
returns class probabilities."""
import numpy as np
import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)
WIDTH = 16
model = nn.Sequential(nn.Linear(WIDTH, 64), nn.ReLU(), nn.Linear(64, 4)).eval()


def handle(body):
    rows = torch.frombuffer(body, dtype=torch.float32).view(-1, WIDTH)
    return model(rows).softmax(dim=-1)


serve = torch.compile(handle, backend=BACKEND)
rng = np.random.default_rng(0)
with torch.no_grad():
    for n_rows in (2, 3, 2, 5, 4):
        body = bytearray(rng.standard_normal((n_rows, WIDTH)).astype("<f4").tobytes())
        probs = serve(body)
        if htcore is not None:
            htcore.mark_step()
print(probs.argmax(-1).tolist())
