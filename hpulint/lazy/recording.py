"""Recording: how the simulated device turns one aten op into a node of the pending graph.

``Recording`` is a mixin of ``SimDevice`` (``sim``): it reads an op's operands (device tensors
as their pending values, CPU tensors and Python numbers as data or constants, the way the real
engine takes them), records the node, binds its outputs and written arguments to handles, and in
PyTorch/XLA's eager mode runs each new value at once. The handles, the pending set and the cuts
(``_execute``, ``_materialize``) are ``SimDevice``'s.
"""
from __future__ import annotations

import struct
import traceback

import torch

from .frames import _name_in, _user_file, user_frame, user_site
from .graph import SCALAR, Data, Handle, Node, Out
from .ops import OP, S, T, TL, VIEW, _NO_DEFAULT, _canon
from .scalar_data import data_type
from .shapes import run_shapes_only

_NARROW_FLOATS = (torch.float32, torch.float16, torch.bfloat16)
_PACK = {torch.float32: "f", torch.float16: "e"}


def _in_dtype(v: float, dtype) -> float:
    """``v`` as the engine holds it in ``dtype`` (a float32 rounds 1 - 4e-10 to 1.0)."""
    code = _PACK.get(dtype)
    try:
        if code is not None:
            return struct.unpack(code, struct.pack(code, v))[0]
        return torch.tensor(v, dtype=dtype).item()
    except (OverflowError, RuntimeError):
        return v


def _first_dtype(args, kwargs):
    """The dtype of an op's first tensor operand (in a tensor list too), or None."""
    for v in (*args, *kwargs.values()):
        if isinstance(v, torch.Tensor):
            return v.dtype
        if isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, torch.Tensor):
                    return x.dtype
    return None


def _flat_tensors(values):
    for v in values:
        if isinstance(v, torch.Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _flat_tensors(v)


_EMPTY_FILL = frozenset({"aten.ones", "aten.ones_like", "aten.new_ones"})
_EMPTY = frozenset({"aten.zeros", "aten.zeros_like", "aten.new_zeros", "aten.empty",
                    "aten.empty_like", "aten.new_empty", "aten.empty_strided"})

class Recording:
    """Operands in, a recorded node out (a mixin of ``SimDevice``)."""

    # -- values ----------------------------------------------------------------------------

    def current(self, h):
        b = h.base
        if b is not None and h.seen != b.version:
            v = self.current(b)
            file, line = user_site()
            for op, consts, idx in h.chain:
                self.seq += 1
                v = Out(Node(op, (v,), consts, file, line, self.bw, self.os, self.seq), idx)
            h.value = v
            h.seen = b.version
        return h.value

    def _write(self, h, value, file, line):
        h.value = value
        h.version += 1
        self.pending[h] = None
        b = h.base
        if b is not None:
            self.seq += 1
            chain = tuple((op, consts, idx) for op, consts, idx in h.chain)
            upd = Node("view_update", (self.current(b), value), (chain,), file, line,
                       self.bw, self.os, self.seq)
            b.value = Out(upd, 0)
            b.version += 1
            h.seen = b.version
            self.pending[b] = None

    def _where(self, frame):
        if frame is None:
            frame = user_frame()
        if frame is None:
            return None, 0
        return _user_file(frame.f_code), frame.f_lineno

    # -- recording ---------------------------------------------------------------------------

    def _input(self, t, frame, inputs, consts):
        e = self.handles.get(id(t))
        if e is not None:
            if self.deferred:
                self.use_upload(e[0])
            v = self.current(e[0])
            if v.__class__ is Data and v.name is None:
                v.name = "" if (v.scalar or frame is None or type(t) is torch.nn.Parameter) \
                    else (_name_in(frame, t) or "")
            inputs.append(v)
            return
        # a CPU tensor used by a device op: uploaded as data for this op
        if t.dim() == 0 and self.profile.scalars_are_data:
            value = t.item()
            if self.profile.scalar_is_constant(value):
                consts.append(("cpu-scalar", value))
                return
            if self.scalar_data.size:  # the same cache as Python scalars (GetIrValueForTensor)
                inputs.append(self.scalar_data.get(value, t.dtype))
            else:
                inputs.append(Data((), t.dtype, scalar=True))
            consts.append(SCALAR)
            return
        inputs.append(Data(tuple(t.shape), t.dtype, name=_name_in(frame, t) if frame else None))

    def _scalar(self, v, inputs, consts, constant=False, dtype=None, data_dtype=None):
        given = v
        if dtype is not None and type(v) is float:
            # the engine takes the value in the op's type before IsSpecialScalar: 1 - 4e-10 is
            # 1.0 in float32, a constant (measured on torch_xla 2.9; not for the _foreach_ ops)
            v = _in_dtype(v, dtype)
        if constant or v is None or self.profile.scalar_is_constant(v):
            consts.append(v)
        else:
            # the engine converts the value to the op's type: 2 and 2.0 are the same data, and
            # equal values of one type are one buffer, one graph input (scalar_data.py)
            if self.profile.typed_scalars:  # torch._lazy: an int is Long data, a float Double
                inputs.append(Data((), "scalar-" + ("float" if isinstance(v, float) else "int"), scalar=True))
            else:
                inputs.append(self.scalar_data.get(given, data_dtype))
            consts.append(SCALAR)

    def _operands(self, info, args, kwargs, frame):
        inputs = []
        consts = []
        nargs = len(args)
        fixed = info.name.rpartition(".")[0] in self.profile.constant_scalar_ops
        dtype = None  # the first tensor operand's floating type: scalars are taken in it
        rounds = not info.name.startswith("aten._foreach_")
        sdtype = data_type(info.name, _first_dtype(args, kwargs))  # the type scalars are data in
        for i, (name, kind, default) in enumerate(info.args):
            if i < nargs:
                v = args[i]
            elif name in kwargs:
                v = kwargs[name]
            elif default is _NO_DEFAULT:
                continue
            else:
                v = default
            if kind == T:
                if isinstance(v, torch.Tensor):
                    self._input(v, frame, inputs, consts)
                    if dtype is None and rounds and v.dtype in _NARROW_FLOATS:
                        dtype = v.dtype
                elif v is None:
                    consts.append(None)
                else:  # a Python number where a tensor goes: a "wrapped number"
                    self._scalar(v, inputs, consts, dtype=dtype, data_dtype=sdtype)
            elif kind == TL:
                marks = []
                for x in v:
                    if isinstance(x, torch.Tensor):
                        self._input(x, frame, inputs, consts)
                        marks.append(1)
                    else:
                        marks.append(_canon(x))
                consts.append(tuple(marks))
            elif kind == S:
                self._scalar(v, inputs, consts, fixed, dtype, sdtype)
            else:
                consts.append(_canon(v))
        return tuple(inputs), tuple(consts)

    def fail(self, exc, what):
        """hpulint itself failed: keep the first error, stop recording, let the script run on."""
        if self.broken is None:
            file, line = user_site()
            self.broken = {"type": type(exc).__name__, "message": f"{what}: {exc}",
                           "file": file, "line": line,
                           "traceback": "".join(traceback.format_exception(exc))}

    def record(self, func, info, args, kwargs):
        try:
            frame = user_frame(1, self.entry)
            file, line = (_user_file(frame.f_code), frame.f_lineno) if frame else (None, 0)
            inputs, consts = self._operands(info, args, kwargs, frame)
        except Exception as e:  # noqa: BLE001 - our bookkeeping, not the script
            self.fail(e, f"recording {info.name}")
            return func(*args, **kwargs)
        if self.compute or info.kind != OP:
            out = func(*args, **kwargs)
        else:
            out = run_shapes_only(func, info, args, kwargs)
        try:
            self._record_outputs(info, args, kwargs, out, inputs, consts, file, line)
            if self.eager:
                if info.kind == VIEW:
                    self._run_view_eagerly(out)
                else:
                    self._run_eagerly(info, args, kwargs, out, file, line)
        except Exception as e:  # noqa: BLE001
            self.fail(e, f"recording the outputs of {info.name}")
        return out

    def _run_eagerly(self, info, args, kwargs, out, file, line):
        """Eager mode: the op's results (and what it wrote) are computed now, as one graph.

        PyTorch/XLA's ``XLATensor::Create`` and ``SetIrValue`` sync every new or updated tensor
        at once (``ApplyEagerSync``) except views, which run with the op that uses them.

        ``ones``/``zeros`` (and their ``_like`` and ``new_`` forms) have no PyTorch/XLA kernel:
        they run as ``empty`` and then ``fill_`` with the value as data, two graphs (measured
        on torch_xla 2.9: the first ``ones`` compiles 2 graphs, a ``zeros`` after it none).
        """
        op = info.name.rpartition(".")[0]
        if (op in _EMPTY_FILL or op in _EMPTY) and isinstance(out, torch.Tensor):
            # a new buffer: the same graph as an upload of that shape and dtype (measured on
            # torch_xla 2.9: zeros(6) after a (6,) upload compiles nothing); zeros need no fill
            self.seq += 1
            empty = Node("device_data", (Data(tuple(out.shape), out.dtype),), (), file, line,
                         self.bw, self.os, self.seq)
            self._execute([Out(empty, 0)], ("eager", file, line), "eager")
            if op in _EMPTY:
                e = self.handles.get(id(out))
                if e is not None:
                    self._materialize([e[0]])
                    self.pending.pop(e[0], None)
                return
            self.seq += 1
            fill = Node("aten.fill_", (Data(tuple(out.shape), out.dtype), Data((), "scalar")),
                        (), file, line, self.bw, self.os, self.seq)
            self._execute([Out(fill, 0)], ("eager", file, line), "eager")
            e = self.handles.get(id(out))
            if e is not None:
                self._materialize([e[0]])
                self.pending.pop(e[0], None)
            return
        hs = []
        written = [args[i] if i < len(args) else kwargs.get(info.args[i][0]) for i in info.mut]
        for t in _flat_tensors((out, written)):
            e = self.handles.get(id(t))
            if e is not None:
                h = e[0]
                hs.append(h.base if h.base is not None else h)
        # each new or updated tensor is synced on its own: an op with two results runs two
        # graphs (measured on torch_xla 2.9: nll_loss_forward's output and total_weight)
        roots = list(dict.fromkeys(v for v in (self.current(h) for h in hs) if type(v) is Out))
        if roots:
            self.critical += 1
            try:
                for root in roots:
                    self._execute([root], ("eager", file, line), "eager")
                self._materialize(hs)
                for h in hs:
                    self.pending.pop(h, None)
            finally:
                self.critical -= 1

    def _run_view_eagerly(self, out):
        """Eager mode: a view op runs as a graph of its own too (measured on torch_xla 2.9:
        ``x.t()`` compiles once per shape); the view stays a view of its base (a later write
        to the base recomputes it), but its value is now device data."""
        roots, hs = [], []
        for t in _flat_tensors((out,)):
            e = self.handles.get(id(t))
            if e is not None:
                v = self.current(e[0])
                if type(v) is Out:
                    roots.append(v)
                    hs.append(e[0])
        if roots:
            self.critical += 1
            try:
                self._execute(roots, ("eager", *self._where(None)), "eager")
                self._materialize(hs)
                for h in hs:
                    self.pending.pop(h, None)
            finally:
                self.critical -= 1

    def _record_outputs(self, info, args, kwargs, out, inputs, consts, file, line):
        self.seq += 1
        node = Node(info.name, inputs, consts, file, line, self.bw, self.os, self.seq)
        kind = info.kind
        if kind == VIEW:
            src = self.handles.get(id(args[0]))
            src = src[0] if src is not None else None
            base = (src.base or src) if src is not None else None
            chain = src.chain if src is not None else ()
            outs = out if isinstance(out, (list, tuple)) else (out,)
            for i, t in enumerate(outs):
                if isinstance(t, torch.Tensor):
                    if base is None:
                        h = Handle(Out(node, i))
                    else:
                        h = Handle(Out(node, i), base, chain + ((info.name, consts, i),),
                                   base.version)
                    self.bind(t, h)
                    self.pending[h] = None
            return out
        # mutated arguments first, then the fresh outputs
        mutated = {}
        for m, a_i in enumerate(info.mut):
            v = args[a_i] if a_i < len(args) else kwargs.get(info.args[a_i][0])
            if isinstance(v, torch.Tensor):
                self._mutate(v, Out(node, 100 + m), file, line)
                mutated[id(v)] = True
            elif isinstance(v, (list, tuple)):
                for j, x in enumerate(v):
                    if isinstance(x, torch.Tensor):
                        self._mutate(x, Out(node, 1000 * (m + 1) + j), file, line)
                        mutated[id(x)] = True
        if isinstance(out, torch.Tensor):
            if id(out) not in mutated:
                h = Handle(Out(node, 0))
                self.bind(out, h)
                self.pending[h] = None
        elif isinstance(out, (list, tuple)):
            for i, t in enumerate(out):
                if isinstance(t, torch.Tensor) and id(t) not in mutated:
                    h = Handle(Out(node, i))
                    self.bind(t, h)
                    self.pending[h] = None
        return out

    def _mutate(self, t, value, file, line):
        e = self.handles.get(id(t))
        if e is None:  # a CPU tensor written by a device op becomes a device tensor
            h = Handle(value)
            self.bind(t, h)
            self.pending[h] = None
            return
        self._write(e[0], value, file, line)

    def alias(self, func, args, kwargs):
        out = func(*args, **kwargs)
        e = self.handles.get(id(args[0]))
        if e is not None and isinstance(out, torch.Tensor):
            self.bind(out, e[0])
        return out
