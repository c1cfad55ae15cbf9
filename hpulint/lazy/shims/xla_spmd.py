"""PyTorch/XLA's SPMD API on the one device of a replay: annotations accepted, nothing sharded.

With one device every sharding is the replicated one, and a run changes no count: measured on
torch_xla 2.9 (PJRT_DEVICE=CPU, one device), a training loop with ``xr.use_spmd()``, a 1-device
``Mesh``, ``MpDeviceLoader(..., input_sharding=ShardingSpec(...))`` and ``mark_sharding`` on a
weight compiles, caches, transfers and marks steps exactly as without them, in lazy and in eager
mode (tests/data/calibration/scripts/spmd_single_device.py is that loop, a row of the table).
A mesh of more than one device is refused: the replay has one.
"""
from __future__ import annotations

import math

from .base import NotStoodIn


def build_spmd(reg, state) -> None:
    xr = reg.module("torch_xla.runtime")
    xs = reg.module("torch_xla.distributed.spmd")

    def use_spmd(auto: bool = False):
        state.spmd = True

    xr.use_spmd = use_spmd
    xr.is_spmd = lambda: bool(getattr(state, "spmd", False))

    class Mesh:
        def __init__(self, device_ids, mesh_shape, axis_names=None):
            ids = [int(i) for i in (device_ids.tolist() if hasattr(device_ids, "tolist")
                                    else device_ids)]
            if len(ids) != math.prod(mesh_shape) or len(ids) != 1:
                raise NotStoodIn("torch_xla.distributed.spmd.Mesh",
                                 f"a mesh of {len(ids)} devices (shape {tuple(mesh_shape)}): "
                                 "the replay has one device")
            self.device_ids, self.mesh_shape = ids, tuple(mesh_shape)
            self.axis_names = tuple(axis_names) if axis_names is not None else None

        def size(self):
            return len(self.device_ids)

        def shape(self):
            names = self.axis_names or tuple(range(len(self.mesh_shape)))
            return dict(zip(names, self.mesh_shape))

        def get_logical_mesh(self):
            import numpy as np

            return np.array(self.device_ids).reshape(self.mesh_shape)

    class ShardingSpec:
        def __init__(self, mesh, partition_spec, minibatch=False):
            self.mesh, self.partition_spec, self.minibatch = mesh, partition_spec, minibatch

    mesh_holder = {}

    def set_global_mesh(mesh):
        mesh_holder["mesh"] = mesh

    def get_global_mesh():
        return mesh_holder.get("mesh")

    def mark_sharding(t, mesh=None, partition_spec=None, *args, **kwargs):
        return t  # replicated on the one device

    xs.Mesh, xs.ShardingSpec = Mesh, ShardingSpec
    xs.set_global_mesh, xs.get_global_mesh = set_global_mesh, get_global_mesh
    xs.mark_sharding = mark_sharding
    xs.clear_sharding = lambda t, *a, **k: t
