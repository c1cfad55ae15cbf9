"""``--no-compute``: device ops are not computed, only their shapes.

The simulated device keeps every tensor on the CPU and, by default, computes its real value. The
counts do not need those values unless the script's control flow or a data-dependent shape
depends on them, and on a model sized for an accelerator (PyTorch/XLA's decoder-only example:
214M parameters, 16 x 512 tokens) computing them is what costs the time, not the recording.

With ``no_compute`` an op that has a device input runs on ``meta`` copies of its arguments, which
gives the shapes, dtypes and strides of its results; the results are fresh CPU tensors of that
layout, zero-filled when small (so that ``loss.item()`` reads 0.0 and a NaN check passes) and left
uninitialised when large (the memory is not touched: nothing is paid for it). An in-place op whose
meta run leaves its arguments' shapes unchanged is skipped (its values are not needed); one that
changes them (``resize_``, an ``out=`` that resizes) and any op without a meta kernel run for real.
View and alias ops always run for real: they cost nothing and must share storage.
"""
from __future__ import annotations

import torch

NO_COMPUTE = ("--no-compute: device ops were not computed (small results read as zeros); counts "
              "that depend on device values (data-dependent shapes, an if on a tensor) may differ")
ZERO_FILL_LIMIT = 1 << 16  # elements: results up to this size are zeros, larger ones uninitialised


def _meta(t):
    if t.is_meta:
        return t
    return torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device="meta")


def _map(v, fn):
    if isinstance(v, torch.Tensor):
        return fn(v)
    if isinstance(v, (list, tuple)):
        return type(v)(_map(x, fn) for x in v)
    if isinstance(v, dict):
        return {k: _map(x, fn) for k, x in v.items()}
    return v


def _same_layout(real, meta):
    return tuple(real.shape) == tuple(meta.shape) and tuple(real.stride()) == tuple(meta.stride())


def _fresh(m):
    out = torch.empty_strided(tuple(m.shape), tuple(m.stride()), dtype=m.dtype)
    if out.numel() <= ZERO_FILL_LIMIT:
        out.zero_()
    return out


def run_shapes_only(func, info, args, kwargs):
    """``func(*args, **kwargs)`` with its results' layout but not their values."""
    try:
        margs = _map(args, _meta)
        mkwargs = _map(kwargs, _meta)
        mout = func(*margs, **mkwargs)
    except Exception:  # noqa: BLE001 - no meta kernel, or one that needs values: compute it
        return func(*args, **kwargs)
    # the arguments the op writes to: skipped when their layout stays as it was
    for a_i in info.mut:
        name = info.args[a_i][0]
        real = args[a_i] if a_i < len(args) else kwargs.get(name)
        meta = margs[a_i] if a_i < len(margs) else mkwargs.get(name)
        reals = real if isinstance(real, (list, tuple)) else (real,)
        metas = meta if isinstance(meta, (list, tuple)) else (meta,)
        for r, m in zip(reals, metas):
            if isinstance(r, torch.Tensor) and not _same_layout(r, m):
                return func(*args, **kwargs)
    if mout is None:
        return None
    if info.list_ret:  # a list of fresh results (the _foreach_ ops)
        return [_fresh(m) if isinstance(m, torch.Tensor) else m for m in mout]
    single = not isinstance(mout, (list, tuple))
    outs = (mout,) if single else mout
    result = []
    for r_i, m in enumerate(outs):
        a_i = info.ret_mut.get(r_i)
        if a_i is not None:  # returns the argument it wrote to
            result.append(args[a_i] if a_i < len(args) else kwargs.get(info.args[a_i][0]))
        elif isinstance(m, torch.Tensor):
            result.append(_fresh(m))
        elif isinstance(m, (list, tuple)):
            result.append(type(m)(_fresh(x) if isinstance(x, torch.Tensor) else x for x in m))
        else:
            result.append(m)
    if single:
        return result[0]
    return type(mout)(result) if isinstance(mout, tuple) else result
