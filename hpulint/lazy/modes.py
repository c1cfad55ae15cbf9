"""The two torch modes that observe a replay for the simulated device.

``_Dispatch`` (a TorchDispatchMode) sees every aten op: ops with a device input are recorded,
host reads and data-dependent ops cut the graph. ``_Functions`` (a TorchFunctionMode) sees the
Python-level API: uploads and downloads (``.to``, ``.cpu()``), factories with a device, and the
host reads that never reach the dispatcher (``tolist``, printing, formatting).
"""
from __future__ import annotations

import os
import sys

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from .frames import _name_in, _norm, _user_file, is_cpu_device, is_fake_device, user_frame
from .graph import Data, Handle, Node, Out
from .ops import ALIAS, DYNAMIC, READ, OpInfo, _INFO


class _Dispatch(TorchDispatchMode):
    @classmethod
    def _should_skip_dynamo(cls):
        return False  # never compiled: skip torch._disable_dynamo's wrapper on every op

    def __init__(self, dev):
        super().__init__()
        self.dev = dev

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        dev = self.dev
        if dev.suspended or dev.broken is not None:
            return func(*args, **kwargs)
        handles = dev.handles
        found = dev.factory > 0
        if not found:
            for a in args:
                if isinstance(a, torch.Tensor):
                    if id(a) in handles:
                        found = True
                        break
                elif isinstance(a, (list, tuple)):
                    for x in a:
                        if isinstance(x, torch.Tensor) and id(x) in handles:
                            found = True
                            break
                    if found:
                        break
            else:
                for a in kwargs.values():
                    if isinstance(a, torch.Tensor) and id(a) in handles:
                        found = True
                        break
        if not found:
            return func(*args, **kwargs)
        info = _INFO.get(func)
        if info is None:
            info = _INFO[func] = OpInfo(func)
        kind = info.kind
        if kind == ALIAS:
            return dev.alias(func, args, kwargs)
        if kind == READ:
            return self._read(func, info, args, kwargs)
        if kind == DYNAMIC:
            return self._dynamic(func, info, args, kwargs)
        if info.name == "aten.index.Tensor" and _has_mask(args):
            return self._masked_index(func, info, args, kwargs)
        if info.name in _INDEX_PUT and _has_mask(args):
            # x[mask] = v, and the backward of x[mask]: the mask goes to the host again
            # (aten::nonzero, measured on torch_xla 2.9), the write stays in the graph
            masks = [m for m in args[1] if isinstance(m, torch.Tensor) and m.dtype in _MASK]
            dev.read([m for m in masks if dev.is_device(m)],
                     "mask index (nonzero runs on the host)", user_frame())
            dev.fallback("nonzero")
            # the write uses the nonzero positions, uploaded: their count is a shape of the graph
            # (torch_xla 2.9: `x[mask] = -inf` compiles again whenever the count changes)
            indices = []
            for m in args[1]:
                if isinstance(m, torch.Tensor) and m.dtype in _MASK and dev.is_device(m):
                    indices += list(m.nonzero(as_tuple=True))
                else:
                    indices.append(m)
            args = (args[0], indices) + tuple(args[2:])
        if info.name == "aten.copy_.default" and not dev.is_device(args[0]):
            # device -> host copy into a CPU tensor
            dev.read([args[1]], "copy_ to host", user_frame())
            return func(*args, **kwargs)
        return dev.record(func, info, args, kwargs)

    def _read(self, func, info, args, kwargs):
        dev = self.dev
        frame = user_frame()
        if info.name == "aten.equal.default":
            dev.read([args[0], args[1]], "torch.equal", frame)
            dev.fallback("equal")
        else:
            dev.read([args[0]], "item" if "scalar" in info.name else "bool", frame)
            dev.fallback("_local_scalar_dense")
        return func(*args, **kwargs)

    def _dynamic(self, func, info, args, kwargs):
        dev = self.dev
        frame = user_frame()
        tensors = [a for a in _flat(args, kwargs) if dev.is_device(a)]
        dev.read(tensors, _short(info.name) + " (runs on the host)", frame)
        dev.fallback(_short(info.name))
        out = func(*args, **kwargs)
        for t in _flat((out,), {}):
            dev.upload(t, frame)
        return out

    def _masked_index(self, func, info, args, kwargs):
        """``x[mask]``: the mask goes to the host (nonzero), the indexing stays in the graph.

        The indices nonzero produces become device data whose length is the number of True
        values, so the graph changes whenever that number does.
        """
        dev = self.dev
        frame = user_frame()
        src, indices = args[0], args[1]
        masks = [x for x in indices if isinstance(x, torch.Tensor) and x.dtype in _MASK]
        dev.read([m for m in masks if dev.is_device(m)], "mask index (nonzero runs on the host)",
                 frame)
        dev.fallback("nonzero")
        out = func(*args, **kwargs)
        if not dev.is_device(src):
            return out
        file, line = (_user_file(frame.f_code), frame.f_lineno) if frame else (None, 0)
        inputs, consts, marks = [], [], []
        dev._input(src, frame, inputs, consts)
        for x in indices:
            if x is None:
                marks.append(None)
            elif x.dtype in _MASK:
                inputs.append(Data((int(x.sum()), x.dim()), torch.int64, (file, line)))
                marks.append("mask")
            else:
                dev._input(x, frame, inputs, consts)
                marks.append(1)
        consts.append(tuple(marks))
        dev.seq += 1
        node = Node(info.name, tuple(inputs), tuple(consts), file, line, dev.bw, dev.os, dev.seq)
        h = Handle(Out(node, 0))
        dev.bind(out, h)
        dev.pending[h] = None
        return out


_MASK = (torch.bool, torch.uint8)
_INDEX_PUT = ("aten.index_put.default", "aten.index_put_.default",
              "aten._index_put_impl_.default")


def _short(name):
    return name.split(".")[1] if name.startswith("aten.") else name


def _has_mask(args):
    if len(args) > 1:
        for x in args[1]:
            if isinstance(x, torch.Tensor) and x.dtype in (torch.bool, torch.uint8):
                return True
    return False


def _flat(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, torch.Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, torch.Tensor):
                    yield x


# ---------------------------------------------------------------------------------------------


class _Functions(TorchFunctionMode):
    def __init__(self, dev):
        super().__init__()
        self.dev = dev

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        dev = self.dev
        prev = dev.entry
        # the ops this call records belong to the first user frame at or above its caller
        dev.entry = sys._getframe(1)
        try:
            try:
                h = _FUNCS.get(func)
            except TypeError:  # an unhashable callable
                h = None
            if h is not None:
                return h(dev, func, args, kwargs)
            d = kwargs.get("device")
            if d is not None and is_fake_device(d):
                return _factory(dev, func, args, kwargs)
            return func(*args, **kwargs)
        finally:
            dev.entry = prev


def _suspended(dev, func, args, kwargs):
    dev.suspended += 1
    try:
        return func(*args, **kwargs)
    finally:
        dev.suspended -= 1


_UPLOAD_FACTORIES = set()


def _factory(dev, func, args, kwargs):
    kwargs = dict(kwargs)
    kwargs["device"] = "cpu"
    if func in _UPLOAD_FACTORIES:  # torch.tensor(data, device=...): host data uploaded
        out = _suspended(dev, func, args, kwargs)
        if isinstance(out, torch.Tensor):
            dev.upload(out, user_frame())
        return out
    dev.factory += 1
    try:
        return func(*args, **kwargs)
    finally:
        dev.factory -= 1


def _to_target(args, kwargs):
    """(device or None, rest-args with the device replaced by cpu)"""
    d = kwargs.get("device")
    if d is not None:
        kw = dict(kwargs)
        kw["device"] = "cpu"
        return d, args, kw
    if args:
        a0 = args[0]
        if isinstance(a0, (str, torch.device)):
            return a0, ("cpu",) + tuple(args[1:]), kwargs
        if isinstance(a0, int) and not isinstance(a0, bool):
            return torch.device("cuda", a0), args, kwargs  # not ours
    return None, args, kwargs


def _h_to(dev, func, args, kwargs):
    t = args[0]
    rest = args[1:]
    if rest and isinstance(rest[0], torch.Tensor):  # t.to(other): follow other's device and dtype
        other = rest[0]
        kw = dict(kwargs)
        kw.setdefault("dtype", other.dtype)
        target = dev.fake_device if dev.is_device(other) else torch.device("cpu")
        return _h_to(dev, func, (t, target) + tuple(rest[1:]), kw)
    target, rest, kw = _to_target(rest, kwargs)
    if target is None or not (is_fake_device(target) or is_cpu_device(target)):
        return func(t, *rest, **kw)
    frame = user_frame()
    if is_fake_device(target):
        if dev.is_device(t):
            return func(t, *rest, **kw)  # a dtype change is recorded; no change returns t
        kw = dict(kw)
        kw["copy"] = True
        out = _suspended(dev, func, (t,) + tuple(rest), kw)
        h = dev.upload(out, frame, _name_in(frame, t) if frame else None)
        if h is not None and dev.loader_batches:
            h.value.loader = dev.loader_of(t)
        return out
    if not dev.is_device(t):
        return func(t, *rest, **kw)
    if _called_from_torch():
        # torch's own helpers (clip_grad_norm_, foreach grouping) move tensors to the device
        # that C++ reports, which is the CPU here: on a real device that is a no-op, not a read
        return t
    dev.read([t], "to(cpu)", frame)
    kw = dict(kw)
    kw["copy"] = True
    return _suspended(dev, func, (t,) + tuple(rest), kw)


_TORCH_DIR = _norm(os.path.dirname(torch.__file__)) + os.sep
_SKIP_FILES = ("overrides.py", "_python_dispatch.py")
# hpulint's own package directory (not any path containing the word: a venv may be named so)
_HPULINT_DIR = _norm(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def _called_from_torch() -> bool:
    """Is the code calling the intercepted torch function part of torch itself?"""
    f = sys._getframe(2)
    while f is not None:
        code = f.f_code
        if _user_file(code):
            return False
        name = code.co_filename
        full = _norm(name)
        if not name.endswith(_SKIP_FILES) and not full.startswith(_HPULINT_DIR):
            return full.startswith(_TORCH_DIR)
        f = f.f_back
    return False


def _h_cpu(dev, func, args, kwargs):
    t = args[0]
    if dev.is_device(t):
        dev.read([t], "cpu()", user_frame())
        return _suspended(dev, torch.Tensor.clone, (t,), {})
    return func(*args, **kwargs)


_SCALAR_READS = ("item", "bool", "int", "float", "index")


def _reader(what):
    scalar = what in _SCALAR_READS

    def h(dev, func, args, kwargs):
        t = args[0]
        if isinstance(t, torch.Tensor) and dev.is_device(t):
            dev.read([t], what, user_frame())
            if scalar:  # aten::_local_scalar_dense runs on the host (a PyTorch/XLA fallback)
                dev.fallback("_local_scalar_dense")
            return _suspended(dev, func, args, kwargs)
        return func(*args, **kwargs)

    return h


def _comparer(what: str):
    """`torch.equal(a, b)`, `torch.allclose(a, b)`: a Python bool, read from the device."""
    def h(dev, func, args, kwargs):
        a, b = args[0], args[1]
        if dev.is_device(a) or dev.is_device(b):
            dev.read([a, b], what, user_frame())
            dev.fallback(what.rsplit(".", 1)[-1])
            return _suspended(dev, func, args, kwargs)
        return func(*args, **kwargs)
    return h


_h_equal = _comparer("torch.equal")
_h_allclose = _comparer("torch.allclose")


def _h_backward(dev, func, args, kwargs):
    frame = user_frame()
    prev = dev.backward_begin(frame)
    # the backward ops belong to this line (the engine runs them under this call)
    dev.entry = frame
    try:
        return func(*args, **kwargs)
    finally:
        dev.bw = prev


def _h_set_data(dev, func, args, kwargs):
    out = func(*args, **kwargs)
    t, value = args[0], args[1]
    e = dev.handles.get(id(value))
    if e is not None:
        dev.bind(t, e[0])
        if dev.deferred:  # a module moved to the device: its parameters are new lazy tensors
            dev.wrap_upload(e[0])
    else:
        dev.unbind(t)
    return out


def _h_device(dev, func, args, kwargs):
    if dev.is_device(args[0]):
        return dev.fake_device
    return func(*args, **kwargs)


_FUNCS = {}


def _register():
    Tn = torch.Tensor
    _FUNCS[Tn.to] = _h_to
    _FUNCS[Tn.cpu] = _h_cpu
    for name, what in (("item", "item"), ("tolist", "tolist"), ("numpy", "numpy"),
                       ("__repr__", "print"), ("__format__", "format"), ("__bool__", "bool"),
                       ("__int__", "int"), ("__float__", "float"), ("__index__", "index"),
                       ("__array__", "numpy")):
        fn = getattr(Tn, name, None)
        if fn is not None:
            _FUNCS[fn] = _reader(what)
    _FUNCS[torch.equal] = _h_equal
    _FUNCS[Tn.equal] = _h_equal
    _FUNCS[torch.allclose] = _h_allclose
    _FUNCS[Tn.allclose] = _h_allclose
    _FUNCS[Tn.backward] = _h_backward
    _FUNCS[torch.autograd.backward] = _h_backward
    _FUNCS[torch.autograd.grad] = _h_backward
    _FUNCS[Tn.data.__set__] = _h_set_data
    _FUNCS[Tn.device.__get__] = _h_device
    for f in (torch.tensor, torch.as_tensor, torch.asarray):
        _UPLOAD_FACTORIES.add(f)


_register()
