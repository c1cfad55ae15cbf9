"""SPMD on the replay's one device: the API is accepted and changes no count (as on torch_xla 2.9
with one device: tests/data/calibration/scripts/spmd_single_device.py is a row of the table);
a mesh of more than one device is named as not stood in."""
from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("torch")

from hpulint.lazy.replay import replay  # noqa: E402

BODY = """\
import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs
from torch_xla import runtime as xr

SPMD = {spmd}
if SPMD:
    xr.use_spmd()
    assert xr.is_spmd()
n = {devices}
device = torch_xla.device()
model = torch.nn.Linear(4, 2).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
kw = {{}}
if SPMD:
    mesh = xs.Mesh(np.arange(n), (n,), ("data", ))
    kw["input_sharding"] = xs.ShardingSpec(mesh, ("data", None))
    model.weight = xs.mark_sharding(model.weight, mesh, ("data", None))
batches = [(torch.randn(3, 4), torch.randn(3, 2)) for _ in range(4)]
for x, y in pl.MpDeviceLoader(batches, device, **kw):
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
print(model.weight.sum().item())
"""


def _run(tmp_path, spmd, devices=1):
    path = tmp_path / f"s_{spmd}_{devices}.py"
    path.write_text(textwrap.dedent(BODY.format(spmd=spmd, devices=devices)))
    return replay(str(path), [], profile="xla")


def test_spmd_on_one_device_counts_as_without_it(tmp_path):
    with_spmd, without = _run(tmp_path, True), _run(tmp_path, False)
    assert with_spmd["status"] == "ok", with_spmd["error"]
    counts = lambda r: (r["compiles"], r["cached"], r["syncs"], r["mark_steps"])  # noqa: E731
    assert counts(with_spmd) == counts(without)
    assert with_spmd["not_stood_in"] == []


def test_a_mesh_of_two_devices_is_named(tmp_path):
    r = _run(tmp_path, True, devices=2)
    assert r["status"] == "error"
    assert "torch_xla.distributed.spmd.Mesh" in r["error"]["message"]
    assert "the replay has one device" in r["error"]["message"]
