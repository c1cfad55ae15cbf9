"""Device data for Python scalar operands, shared by value as PyTorch/XLA shares it.

On PyTorch/XLA a Python scalar operand that is not 0, 1 or -1 becomes a 0-dim device-data
value (``XLAGraphExecutor::GetIrValueForScalar``). The data comes from
``LazyGraphExecutor::DataCacheArena``: an LRU cache (``torch_lazy_device_data_cache_size``,
128 entries) of host tensors made with ``at::scalar_tensor(value, type)`` and compared by dtype
and bytes, so equal values of one type get the *same* device buffer. A 0-dim CPU tensor used
as an operand goes through the same cache (``XLATensor::GetIrValueForTensor``).

When the graph is lowered, ``LoweringContext::GetParameter`` gives one parameter to each
distinct buffer, and the graph's hash includes the ``parameter_sequence`` (which parameter
each device-data node uses). So a graph where two scalar operands happen to be equal has one
parameter fewer than the same graph with different values: a new compilation. Measured on
torch_xla 2.9 (PJRT_DEVICE=CPU): ``t.mul(a).add(b)`` compiles at (0.3, 0.7), is cached at
(0.4, 0.6), compiles again at (0.5, 0.5); int 2 and float 2.0 on a float32 op share; a value
on a float32 op and the same value on an int64 or float64 op do not.

The data's type is the op's tensor type, with the exceptions measured on torch_xla 2.9: a
``mul`` of a float16 or bfloat16 tensor computes in float32 (its scalar is float32 data),
and the ``value`` of ``addcmul``/``addcdiv`` is float64 data.
"""
from __future__ import annotations

import struct
from collections import OrderedDict

import torch

from .graph import Data

CACHE_SIZE = 128  # torch/csrc/lazy/core/config.cpp: torch_lazy_device_data_cache_size

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_PACK = {torch.float16: "e", torch.float32: "f", torch.float64: "d"}
_F32_OPS = {"mul"}  # ops whose float16/bfloat16 form computes in float32 on PyTorch/XLA
_F64_OPS = {"addcmul", "addcdiv"}  # ops whose scalar ``value`` is float64 data


def data_type(op: str, tensor_dtype):
    """The dtype of the device data a scalar operand of ``op`` (``aten.mul.Scalar``) gets."""
    if tensor_dtype is None:
        return None
    base = op.split(".")[1] if op.count(".") >= 1 else op
    base = base.rstrip("_") if not base.startswith("_") else base
    if base in _F64_OPS and tensor_dtype in _FLOATS:
        return torch.float64
    if base in _F32_OPS and tensor_dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    return tensor_dtype


def _value_in(v, dtype):
    """``v`` as ``at::scalar_tensor(v, dtype)`` holds it (what the cache compares)."""
    if type(v) is bool or dtype is None:
        return (type(v).__name__, v)
    try:
        if dtype in _FLOATS:
            code = _PACK.get(dtype)
            if code is not None:
                return struct.unpack(code, struct.pack(code, float(v)))[0]
            return torch.tensor(float(v), dtype=dtype).item()
        if dtype.is_complex:
            return complex(v)
        if dtype == torch.bool:
            return bool(v)
        return int(v)
    except (OverflowError, RuntimeError, TypeError, ValueError):
        return (type(v).__name__, v)


class ScalarData:
    """The device data of scalar operands, one ``Data`` per (dtype, value) while it is cached.

    ``size`` 0 turns sharing off (the ``hpu`` profile: no run of Gaudi's engine shows it): every
    Python scalar operand gets a ``Data`` of its own.
    """

    def __init__(self, size=CACHE_SIZE):
        self.size = size
        self._cache = OrderedDict()

    def get(self, value, dtype) -> Data:
        if not self.size:
            return Data((), "scalar", scalar=True)
        key = (dtype, _value_in(value, dtype))
        data = self._cache.get(key)
        if data is not None:
            self._cache.move_to_end(key)
            return data
        data = self._cache[key] = _new(dtype)
        if len(self._cache) > self.size:
            self._cache.popitem(last=False)
        return data


def _new(dtype) -> Data:
    # the parameter's type in the graph's signature: the data's dtype where the op has a tensor
    return Data((), "scalar" if dtype is None else dtype, scalar=True)
