"""Run a compile snippet on PyTorch/XLA and print its compilation and host-transfer counts.

    PJRT_DEVICE=CPU python snippet_read.py ../../compile_snippets/c503_linear_probe_ridge_solve.py [--no-read]

``--no-read`` runs it with the per-epoch `err.item()` print replaced by `pass`, to count what the
read itself costs.
"""
import runpy
import sys
import tempfile

import torch_xla.debug.metrics as met

path = sys.argv[1]
if "--no-read" in sys.argv:
    src = open(path).read().replace('        print(epoch, f"probe mse {err.item():.4f}")', "        pass")
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(src)
    path = fh.name
runpy.run_path(path, run_name="__main__")
for name in ("CompileTime", "ExecuteTime", "TransferFromDeviceTime"):
    data = met.metric_data(name)
    print(name, data[0] if data else 0)
