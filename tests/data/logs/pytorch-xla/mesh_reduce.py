"""PyTorch/XLA: `xm.mesh_reduce` of a host number in a step loop still runs the device.

Run: PJRT_DEVICE=CPU python mesh_reduce.py none > mesh_reduce.log 2>&1;
     PJRT_DEVICE=CPU python mesh_reduce.py host >> mesh_reduce.log 2>&1
torch_xla 2.9's `xla_rendezvous` (which `mesh_reduce` and `rendezvous` call) runs the pending graph
with `torch_xla.sync()`, gathers the payload sizes through the device and reads them with `.item()`,
whatever the payload is: four steps, each reducing the Python float 3.0.
"""
import sys

import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

device = torch_xla.device()
w = torch.randn(8, 8, device=device)
mode = sys.argv[1]
torch_xla.sync()
met.clear_all()
for step in range(4):
    x = torch.randn(4, 8, device=device)
    loss = (x @ w).sum()
    if mode == "host":
        avg = xm.mesh_reduce("n", 3.0, np.mean)
    torch_xla.sync()
executions = met.metric_data("ExecuteTime")[0]
transfers = (met.metric_data("TransferFromDeviceTime") or [0])[0]
print(f"{mode}: executions {executions}, transfers to the host {transfers}")
