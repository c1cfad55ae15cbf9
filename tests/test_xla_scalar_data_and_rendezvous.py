"""The xla profile against counts measured on torch_xla 2.9 (PJRT_DEVICE=CPU) for each script
below: equal Python scalars of one type share one graph input, ``xm.mesh_reduce`` /
``xm.rendezvous`` go through ``xla_rendezvous``, ``xm.save`` copies to the host in one batch,
and a view of a live tensor is computed at the step marker with it.

Every expected tuple is (compilations, cached executions, host transfers, step markers), read
from torch_xla's ``UncachedCompile``, ``CachedCompile``, ``TransferFromDeviceTime`` samples and
``MarkStep`` after running the same script there.
"""
from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("torch")

from hpulint.lazy.replay import replay  # noqa: E402

HEAD = """\
import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
"""

EMA = HEAD + """\
e = torch.randn(16).to(device)
p = torch.randn(16).to(device)
xm.mark_step()
for decay in (0.3, 0.4, 0.5, 0.25, 0.5):
    e.mul_(decay).add_(p, alpha=1 - decay)
    xm.mark_step()
"""

# one graph per step with two scalar operands a and b; (7, 7) and (2, 2.0) make them equal
PAIRS = HEAD + """\
f = torch.randn(8).to(device)
h = torch.randn(8).to(torch.bfloat16).to(device)
i = torch.arange(8).to(device)
xm.mark_step()
for a, b in ((3, 4), (5, 6), (7, 7), (2, 2.0)):
    out = {expr}
    xm.mark_step()
"""

MESH = HEAD + """\
w = torch.randn(4).to(device)
xm.mark_step()
print(xm.mesh_reduce("a", 0.5, np.mean))
print(xm.mesh_reduce("a", 1.5, np.mean))
pending = w * 3
print(xm.mesh_reduce("a", 2.5, np.mean))
print(xm.rendezvous("done"))
"""

SAVE = HEAD + """\
import os
import tempfile

model = torch.nn.Linear(4, 3).to(device)
with torch.no_grad():
    model.weight.mul_(2)
xm.save(model.state_dict(), os.path.join(tempfile.mkdtemp(), "m.pt"))
y = (model.weight * 2)[:2]
xm.mark_step()
print(y.cpu().sum())
"""


def _counts(tmp_path, source, profile="xla"):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(source))
    r = replay(str(path), [], profile=profile)
    assert r["status"] == "ok", r.get("error")
    return r["compiles"], r["cached"], r["syncs"], r["mark_steps"]


def test_equal_scalars_of_a_graph_are_one_input(tmp_path):
    # decay 0.5: mul_(0.5) and add_(alpha=0.5) share one parameter, a graph of its own (compiled
    # once, cached at the second 0.5); 0.3/0.7, 0.4/0.6 and 0.25/0.75 run the first graph
    assert _counts(tmp_path, EMA) == (2, 3, 0, 6)


def test_the_hpu_profile_keeps_one_input_per_scalar(tmp_path):
    # no run of Gaudi's engine shows the sharing: the hpu profile is unchanged
    assert _counts(tmp_path, EMA, profile="hpu") == (1, 4, 0, 6)


@pytest.mark.parametrize("expr, compiles", [
    ("f.mul(a).add(float(b))", 2),  # int 7 and float 7.0 on a float32 op: one buffer
    ("(f.mul(a), i.mul(int(b)))", 1),  # the same value on a float32 and an int64 op: two
    ("(f.mul(a / 10), h.mul(b / 10))", 2),  # bfloat16 mul computes in float32: 0.7 shared
    ("f.addcdiv(f, f + 9, value=a / 10).mul(b / 10)", 1),  # addcdiv's value is float64 data
    ("f.mul(a / 10).add(torch.tensor(b / 10))", 2),  # a 0-dim CPU tensor: the same cache
], ids=["int-and-float", "float32-and-int64", "float32-and-bfloat16-mul", "addcdiv-value",
        "cpu-scalar-tensor"])
def test_which_equal_scalars_share_an_input(tmp_path, expr, compiles):
    assert _counts(tmp_path, PAIRS.format(expr=expr)) == (compiles, 4 - compiles, 0, 5)


def test_mesh_reduce_and_rendezvous_sync_gather_and_read_back(tmp_path):
    # per mesh_reduce: 3 step markers, 2 graphs (compiled at the first call), 6 transfers; the
    # third call's first sync also runs the pending w * 3 (one more compilation); an empty
    # rendezvous stops after its second sync and one read
    assert _counts(tmp_path, MESH) == (3, 5, 19, 12)


def test_save_copies_the_state_dict_in_one_batch_and_views_are_computed_at_the_step(tmp_path):
    # xm.save: the pending mul_ of the weight and the state dict in one graph, one transfer;
    # the slice y, alive at the step marker, is computed there: its .cpu() runs no graph
    assert _counts(tmp_path, SAVE) == (2, 0, 2, 1)
