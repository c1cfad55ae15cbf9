"""The simulated lazy device: CPU tensors that behave, for counting purposes, like HPU/XLA ones.

Two torch modes do the work while a replay runs:

* ``_Dispatch`` (a TorchDispatchMode) sees every aten op. An op with a device tensor among its
  inputs (or a factory called with ``device="hpu"``) is computed on the CPU as usual *and*
  recorded as a node of the pending graph; its outputs become device tensors. Host reads that
  reach the dispatcher (``_local_scalar_dense`` for ``.item()`` and ``bool()``, ``equal``) and
  ops whose output shape depends on data (``nonzero``, boolean-mask indexing) cut the graph.
* ``_Functions`` (a TorchFunctionMode) sees the Python-level API: ``.to("hpu")``,
  ``device="xla"`` in factories, ``.cpu()``, and host reads that never reach the dispatcher
  (``.tolist()``, ``.numpy()``, printing and formatting a tensor).

``SimDevice`` owns the pending graph, the compilation cache and the counters and events.
"""
from __future__ import annotations

import os
import sys
import sysconfig
import time
import traceback
import weakref

import torch
import torch.optim.optimizer as _optim
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from .graph import SCALAR, Data, Handle, Node, Out, canonical, explain
from .profiles import get_profile

FAKE_DEVICE_TYPES = ("hpu", "xla")


class StopReplay(BaseException):
    """Raised by a step marker to end a replay early (``--max-steps``, a timeout)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# ---------------------------------------------------------------------------------------------
# Which frames are the user's? Everything but torch, hpulint, the standard library and
# site-packages: the script, its own modules, a test file using the Python API.


def _norm(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


_LIBRARY_DIRS = tuple(
    sorted(
        {
            _norm(os.path.dirname(torch.__file__)) + os.sep,
            _norm(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep,
            *(
                _norm(p) + os.sep
                for key in ("stdlib", "platstdlib", "purelib", "platlib")
                if (p := sysconfig.get_paths().get(key))
            ),
        }
    )
)
_USER_CODE: dict = {}  # code object -> normalised file name, or "" when not user code


def _user_file(code) -> str:
    name = code.co_filename
    if name.startswith("<"):
        result = name if name in ("<string>", "<stdin>") else ""
    else:
        full = _norm(name)
        result = "" if full.startswith(_LIBRARY_DIRS) else full
    _USER_CODE[code] = result
    return result


def is_user_path(path: str) -> bool:
    """Is this file the user's (not torch, hpulint, the standard library or site-packages)?"""
    if not path or path.startswith("<"):
        return path in ("<string>", "<stdin>")
    return not _norm(path).startswith(_LIBRARY_DIRS)


def user_frame(depth: int = 1, start=None):
    """The innermost frame of user code calling into torch (or None).

    ``start`` is where to begin the walk outwards (default: the caller).
    """
    f = sys._getframe(depth) if start is None else start
    cache = _USER_CODE
    while f is not None:
        u = cache.get(f.f_code)
        if u is None:
            u = _user_file(f.f_code)
        if u:
            return f
        f = f.f_back
    return None


def user_stack(frame) -> list:
    """(file, line) of ``frame`` and every user frame that called it, innermost first."""
    out = []
    f = frame
    while f is not None:
        u = _USER_CODE.get(f.f_code)
        if u is None:
            u = _user_file(f.f_code)
        if u:
            out.append((u, f.f_lineno))
        f = f.f_back
    return out


def user_site(depth: int = 1):
    f = user_frame(depth + 1)
    if f is None:
        return None, 0
    return _USER_CODE[f.f_code], f.f_lineno


def is_fake_device(d) -> bool:
    if isinstance(d, str):
        return d.split(":", 1)[0] in FAKE_DEVICE_TYPES
    if isinstance(d, torch.device):
        return d.type in FAKE_DEVICE_TYPES
    return False


def is_cpu_device(d) -> bool:
    if isinstance(d, str):
        return d.split(":", 1)[0] == "cpu"
    if isinstance(d, torch.device):
        return d.type == "cpu"
    return False


# ---------------------------------------------------------------------------------------------
# Per-op facts from the aten schema, computed once per overload.

T, TL, S, OTHER = 0, 1, 2, 3  # tensor, tensor list, Scalar, anything else
OP, VIEW, ALIAS, READ, DYNAMIC = range(5)

_ALIAS_OPS = {"aten.detach.default", "aten.alias.default", "aten.lift_fresh.default"}
_READ_OPS = {"aten._local_scalar_dense.default", "aten.equal.default", "aten.is_nonzero.default"}
# Output shape depends on the data: PyTorch/XLA runs these on the CPU (no lowering by default).
_DYNAMIC_OPS = {
    "aten.nonzero.default", "aten.masked_select.default", "aten._unique2.default",
    "aten.unique_dim.default", "aten.unique_consecutive.default", "aten._unique.default",
    "aten.repeat_interleave.Tensor", "aten.bincount.default",
}
_NO_DEFAULT = object()


class OpInfo:
    __slots__ = ("name", "args", "kind", "mut", "nret", "ret_mut", "list_ret")

    def __init__(self, func):
        schema = func._schema
        self.name = str(func)
        args = []
        mut = []  # indexes of arguments the op writes to
        for i, a in enumerate(schema.arguments):
            t = str(a.type)
            if t in ("Tensor", "Optional[Tensor]"):
                k = T
            elif t.startswith("List[") and "Tensor" in t:
                k = TL
            elif t in ("number", "Optional[number]"):
                k = S
            else:
                k = OTHER
            default = a.default_value if a.has_default_value() else _NO_DEFAULT
            args.append((a.name, k, default))
            if a.alias_info is not None and a.alias_info.is_write:
                mut.append(i)
        self.args = tuple(args)
        self.mut = tuple(mut)
        self.nret = len(schema.returns)
        # return index -> argument index it aliases, for `Tensor(a!)` returns
        ret_mut = {}
        for r_i, r in enumerate(schema.returns):
            if r.alias_info is not None and r.alias_info.is_write:
                for a_i in mut:
                    if schema.arguments[a_i].alias_info.before_set == r.alias_info.before_set:
                        ret_mut[r_i] = a_i
        self.ret_mut = ret_mut
        self.list_ret = any(str(r.type).startswith("List[") for r in schema.returns)
        if self.name in _READ_OPS:
            self.kind = READ
        elif self.name in _DYNAMIC_OPS:
            self.kind = DYNAMIC
        elif self.name in _ALIAS_OPS:
            self.kind = ALIAS
        elif func.is_view and not mut:
            self.kind = VIEW
        else:
            self.kind = OP


_INFO: dict = {}


def _canon(v):
    t = type(v)
    if t in (int, float, bool, str) or v is None:
        return v
    if t in (list, tuple):
        return tuple(_canon(x) for x in v)
    if isinstance(v, torch.SymInt):
        return int(v)
    return str(v)


class _Ref(weakref.ref):
    __slots__ = ("key",)


# ---------------------------------------------------------------------------------------------


class MetricsMixin:
    """What the metric shims (torch_xla.debug.metrics, Gaudi's metric_global) read from a device."""

    def metric_count(self, name):
        if name == "CompileTime":
            return self.compiles
        if name == "ExecuteTime":
            return self.compiles + self.cached
        if name in ("TransferFromDeviceTime", "TransferFromServerTime"):
            return self.syncs
        return 0

    def counter(self, name):
        return {"MarkStep": self.mark_steps, "UncachedCompile": self.compiles,
                "CachedCompile": self.cached}.get(name, 0)


class SimDevice(MetricsMixin):
    """Counts what a lazy engine would compile, execute and transfer for the code it observes."""

    engine = "sim"

    def __init__(self, profile="hpu", max_steps=None):
        self.profile = get_profile(profile)
        self.fake_device = torch.device(self.profile.device_type, 0)
        self.max_steps = max_steps
        # counters
        self.compiles = 0
        self.cached = 0
        self.syncs = 0
        self.mark_steps = 0
        self.max_graph_nodes = 0
        self.events = []  # compile and growth events, in order
        self.sync_sites = {}  # (file, line, what) -> aggregated sync event
        self.pending_at_exit = None
        # state
        self.handles = {}  # id(tensor) -> (Handle, _Ref)
        self.pending = {}  # ordered set of Handles whose value is (or may be) a pending node
        self.cache = {}  # signature -> compile ordinal
        self.last_at_site = {}  # cut site -> last Graph executed there
        self.seq_at_site = {}  # cut site -> node counter when it last executed
        self.suspended = 0
        self.factory = 0
        self.entry = None  # the frame that called the torch function being handled
        self.critical = 0  # inside a cut: an interrupt waits until the counts are consistent
        self.interrupt = None
        self.broken = None  # hpulint's own failure: recording stops, the script goes on
        self.seq = 0
        self.bw = 0  # backward pass being recorded (0: none)
        self.os = 0  # optimizer step being recorded (0: none)
        self.bw_count = 0
        self.os_count = 0
        self.bw_lines = {}  # pass id -> (file, line)
        self.os_lines = {}
        self.unmarked_bw = []  # backward passes since the last step marker
        self.unmarked_os = []  # optimizer steps since the last step marker
        self.growth = None  # the open growth event
        self.seq_at_mark = 0
        self.started = time.perf_counter()
        self.loader_batches = {}  # id(CPU tensor) -> ((file, line) of its DataLoader, ref)
        self._dispatch = _Dispatch(self)
        self._functions = _Functions(self)
        self._hooks = []
        self._active = False

    # -- handles ---------------------------------------------------------------------------

    def _dead(self, ref):
        entry = self.handles.get(ref.key)
        if entry is not None and entry[1] is ref:
            del self.handles[ref.key]

    def bind(self, t, h):
        key = id(t)
        old = self.handles.get(key)
        if old is not None:
            if old[0] is h:
                return
            try:
                old[0].refs.remove(old[1])
            except ValueError:
                pass
        r = _Ref(t, self._dead)
        r.key = key
        self.handles[key] = (h, r)
        h.refs.append(r)

    def unbind(self, t):
        old = self.handles.pop(id(t), None)
        if old is not None:
            try:
                old[0].refs.remove(old[1])
            except ValueError:
                pass

    def handle(self, t):
        e = self.handles.get(id(t))
        return e[0] if e is not None else None

    def is_device(self, t) -> bool:
        return id(t) in self.handles

    def upload(self, t, frame=None, name=None):
        """``t`` (a CPU tensor) now lives on the device as data."""
        if self.broken is not None:
            return None
        file, line = self._where(frame)
        h = Handle(Data(tuple(t.shape), t.dtype, (file, line), name))
        self.bind(t, h)
        return h

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
        return _USER_CODE[frame.f_code], frame.f_lineno

    # -- recording ---------------------------------------------------------------------------

    def _input(self, t, frame, inputs, consts):
        e = self.handles.get(id(t))
        if e is not None:
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
            inputs.append(Data((), t.dtype, scalar=True))
            consts.append(SCALAR)
            return
        inputs.append(Data(tuple(t.shape), t.dtype, name=_name_in(frame, t) if frame else None))

    def _scalar(self, v, inputs, consts):
        if v is None or self.profile.scalar_is_constant(v):
            consts.append(v)
        else:
            inputs.append(Data((), type(v).__name__, scalar=True))
            consts.append(SCALAR)

    def _operands(self, info, args, kwargs, frame):
        inputs = []
        consts = []
        nargs = len(args)
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
                elif v is None:
                    consts.append(None)
                else:  # a Python number where a tensor goes: a "wrapped number"
                    self._scalar(v, inputs, consts)
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
                self._scalar(v, inputs, consts)
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
            file, line = (_USER_CODE[frame.f_code], frame.f_lineno) if frame else (None, 0)
            inputs, consts = self._operands(info, args, kwargs, frame)
        except Exception as e:  # noqa: BLE001 - our bookkeeping, not the script
            self.fail(e, f"recording {info.name}")
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        try:
            return self._record_outputs(info, args, kwargs, out, inputs, consts, file, line)
        except Exception as e:  # noqa: BLE001
            self.fail(e, f"recording the outputs of {info.name}")
            return out

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

    # -- cuts ------------------------------------------------------------------------------

    def _materialize(self, handles):
        made = {}
        for h in handles:
            v = h.value
            if type(v) is not Out:
                continue
            d = made.get(v)
            if d is None:
                t = None
                for r in h.refs:
                    t = r()
                    if t is not None:
                        break
                shape = tuple(t.shape) if t is not None else ()
                dtype = t.dtype if t is not None else None
                d = made[v] = Data(shape, dtype, (v.node.file, v.node.line))
            h.value = d
            h.version += 1
            if h.base is not None:
                h.seen = h.base.version

    def _site(self, kind, frame):
        if frame is None:
            return (kind, None, 0)
        return (kind, _USER_CODE[frame.f_code], frame.f_lineno)

    def _execute(self, roots, site, step_kind):
        graph = canonical(roots)
        if not graph.nodes:
            return None
        sig = graph.signature
        prev = self.last_at_site.get(site)
        prev_seq = self.seq_at_site.get(site, 0)
        self.last_at_site[site] = graph
        self.seq_at_site[site] = self.seq
        n = len(graph.nodes)
        if n > self.max_graph_nodes:
            self.max_graph_nodes = n
        if sig in self.cache:
            self.cached += 1
        else:
            self.compiles += 1
            self.cache[sig] = self.compiles
            if prev is None:
                cause = {"kind": "first", "changes": [], "summary": "first graph at this site"}
            else:
                carried = any(node.seq <= prev_seq for node in graph.nodes)
                cause = explain(prev, graph, carried)
            self.events.append({
                "kind": "compile", "n": self.compiles, "recompile": prev is not None,
                "site": step_kind, "file": site[1], "line": site[2], "step": self.mark_steps,
                "nodes": n, "cause": cause,
            })
        return graph

    def mark_step(self, what="mark_step", frame=None):
        """A step marker: compile (or reuse) and run everything pending, then count the step."""
        if frame is None:
            frame = user_frame()
        self.critical += 1
        try:
            if self.broken is None:
                self._mark_step(what, frame)
            else:
                self.mark_steps += 1
        except Exception as e:  # noqa: BLE001
            self.fail(e, "cutting the graph at a step marker")
            self.mark_steps += 1
        finally:
            self.critical -= 1
        self._check_stop()

    def _check_stop(self):
        if self.interrupt is not None and not self.critical:
            reason, self.interrupt = self.interrupt, None
            raise StopReplay(reason)
        if self.max_steps is not None and self.mark_steps >= self.max_steps:
            raise StopReplay(f"stopped after {self.mark_steps} step markers (--max-steps)")

    def _mark_step(self, what, frame):
        site = self._site(what, frame)
        roots_h = {}
        for h in self.pending:
            if not h.alive():
                continue
            b = h.base
            if b is not None:
                if b.alive():  # the base carries the data; the view is recomputed from it
                    roots_h[b] = None
                    continue
                # the view outlives its base: from now on it is a tensor of its own
                self.current(h)
                h.base = None
                h.chain = ()
            roots_h[h] = None
        roots = []
        for h in roots_h:
            v = self.current(h)
            if type(v) is Out:
                roots.append(v)
        self.pending.clear()
        self._execute(roots, site, what)
        self._materialize(roots_h)
        self._close_growth(f"{what} at line {site[2]}")
        self.mark_steps += 1

    def _sync(self, what, frame):
        file, line = (_USER_CODE[frame.f_code], frame.f_lineno) if frame else (None, 0)
        self.syncs += 1
        key = (file, line, what)
        ev = self.sync_sites.get(key)
        if ev is None:
            ev = self.sync_sites[key] = {"kind": "sync", "what": what, "file": file,
                                         "line": line, "count": 0, "steps": [],
                                         "first_step": self.mark_steps}
        ev["count"] += 1
        if not ev["steps"] or ev["steps"][-1] != self.mark_steps:
            ev["steps"].append(self.mark_steps)

    def read(self, tensors, what, frame=None, materialize=True):
        """A host read of device tensors: run the part of the pending graph they need."""
        if frame is None:
            frame = user_frame()
        self.critical += 1
        try:
            if self.broken is None:
                return self._read(tensors, what, frame, materialize)
            self._sync(what, frame)
            return True
        except Exception as e:  # noqa: BLE001
            self.fail(e, f"a host read ({what})")
            return True
        finally:
            self.critical -= 1
            if self.interrupt is not None and not self.critical:
                self._check_stop()

    def _read(self, tensors, what, frame, materialize):
        hs = []
        for t in tensors:
            e = self.handles.get(id(t))
            if e is not None:
                hs.append(e[0])
        if not hs:
            return False
        roots = [v for v in (self.current(h) for h in hs) if type(v) is Out]
        if roots:
            self._execute(roots, self._site(what, frame), what)
            if materialize:
                self._materialize(hs)
        self._sync(what, frame)
        return True

    def finish(self):
        """The script ended: a graph still pending is not compiled (like a real engine)."""
        if self.broken is not None:
            return
        try:
            self._finish()
        except Exception as e:  # noqa: BLE001
            self.fail(e, "looking at the graph left pending at the end")

    def _finish(self):
        self._close_growth("the end of the script")
        roots = []
        for h in self.pending:
            if not h.alive():
                continue
            v = self.current(h)
            if type(v) is Out:
                roots.append(v)
        self.pending.clear()
        if roots:
            graph = canonical(roots)
            if graph.nodes:
                lines = sorted({n.line for n in graph.nodes if n.line})
                ev = {"kind": "pending_at_exit", "nodes": len(graph.nodes),
                      "step": self.mark_steps, "lines": lines[:50], "compiled": False}
                self.pending_at_exit = ev
                self.events.append(ev)

    # -- training-iteration markers --------------------------------------------------------
    # A graph that grows with no step marker shows up as more than one training iteration
    # (optimizer step, or backward pass when the script has no optimizer) recorded since the
    # last marker. Gradient accumulation (several backward passes, one optimizer step) is not
    # growth.

    def backward_begin(self, frame):
        self.bw_count += 1
        prev = self.bw
        self.bw = self.bw_count
        self.bw_lines[self.bw] = user_stack(frame)
        self.unmarked_bw.append(self.bw)
        self._check_growth()
        return prev

    def optimizer_step_begin(self):
        frame = user_frame()
        self.os_count += 1
        self.os = self.os_count
        self.os_lines[self.os] = user_stack(frame)
        self.unmarked_os.append(self.os)
        self._check_growth()

    def optimizer_step_end(self):
        self.os = 0

    def _check_growth(self):
        if len(self.unmarked_os) < 2 and (self.os_count or len(self.unmarked_bw) < 2):
            return
        ev = self.growth
        if ev is None:
            ev = self.growth = {"kind": "growth", "step": self.mark_steps, "file": None,
                                "line": None, "compiled": False}
            self.events.append(ev)
        stacks = [self.bw_lines[b] for b in self.unmarked_bw] + \
            [self.os_lines[o] for o in self.unmarked_os]
        inner = {st[0] for st in stacks if st}
        ev["backward_passes"] = len(self.unmarked_bw)
        ev["optimizer_steps"] = len(self.unmarked_os)
        ev["lines"] = sorted({line for _, line in inner})
        ev["files"] = sorted({f for f, _ in inner if f})
        ev["stack"] = sorted({fl for st in stacks for fl in st}, key=lambda fl: (fl[0] or "", fl[1]))
        ev["nodes"] = self.seq - self.seq_at_mark

    def _close_growth(self, closed_by):
        ev = self.growth
        if ev is not None:
            ev["nodes"] = self.seq - self.seq_at_mark
            ev["closed_by"] = closed_by
            self.growth = None
            # several backward passes and one optimizer step is gradient accumulation
            nos, nbw = len(self.unmarked_os), len(self.unmarked_bw)
            if not (nos >= 2 or (nos == 0 and nbw >= 2 and self.os_count == 0)):
                self.events.remove(ev)
        self.unmarked_bw = []
        self.unmarked_os = []
        self.seq_at_mark = self.seq

    # -- DataLoader batches ---------------------------------------------------------------------
    # The tensors a DataLoader yields remember where that DataLoader was made, so that a graph
    # input uploaded from a batch can name it (a short last batch recompiles: HPU007).

    def tag_batch(self, batch, site):
        for t in _flat_batch(batch):
            key = id(t)
            self.loader_batches[key] = (site, weakref.ref(t, lambda r, k=key: self._untag(k, r)))

    def _untag(self, key, ref):
        e = self.loader_batches.get(key)
        if e is not None and e[1] is ref:
            del self.loader_batches[key]

    def loader_of(self, t):
        e = self.loader_batches.get(id(t))
        if e is not None and e[1]() is t:
            return e[0]
        return None

    def _patch_loader(self):
        from torch.utils.data import dataloader as dl

        dev = self
        init, get_iter, nxt = dl.DataLoader.__init__, dl.DataLoader._get_iterator, \
            dl._BaseDataLoaderIter.__next__
        self._loader_saved = (init, get_iter, nxt)

        def __init__(self_, *args, **kwargs):
            init(self_, *args, **kwargs)
            frame = user_frame()
            if frame is not None:
                self_._hpulint_site = (_USER_CODE[frame.f_code], frame.f_lineno)

        def _get_iterator(self_):
            it = get_iter(self_)
            it._hpulint_site = getattr(self_, "_hpulint_site", None)
            return it

        def __next__(self_):
            batch = nxt(self_)
            site = getattr(self_, "_hpulint_site", None)
            if site is not None and dev.broken is None:
                try:
                    dev.tag_batch(batch, site)
                except Exception as e:  # noqa: BLE001 - our bookkeeping, not the script
                    dev.fail(e, "tagging a DataLoader batch")
            return batch

        dl.DataLoader.__init__ = __init__
        dl.DataLoader._get_iterator = _get_iterator
        dl._BaseDataLoaderIter.__next__ = __next__

    def _unpatch_loader(self):
        from torch.utils.data import dataloader as dl

        dl.DataLoader.__init__, dl.DataLoader._get_iterator, dl._BaseDataLoaderIter.__next__ = \
            self._loader_saved

    # -- what the shims ask ------------------------------------------------------------------

    def torch_device(self, index=None):
        return torch.device(self.profile.device_type, index or 0)


    # -- results -------------------------------------------------------------------------------

    def all_events(self):
        return self.events + sorted(self.sync_sites.values(), key=lambda e: (e["line"], e["what"]))

    def summary(self) -> dict:
        return {
            "profile": self.profile.name,
            "engine": self.engine,
            "compiles": self.compiles,
            "cached": self.cached,
            "syncs": self.syncs,
            "mark_steps": self.mark_steps,
            "max_graph_nodes": self.max_graph_nodes,
            "events": self.all_events(),
            "optimizer_steps": self.os_count,
            "backward_passes": self.bw_count,
            "internal_error": self.broken,
        }

    # -- activation ------------------------------------------------------------------------------

    def __enter__(self):
        self._functions.__enter__()
        self._dispatch.__enter__()
        self._hooks.append(_optim.register_optimizer_step_pre_hook(
            lambda opt, args, kwargs: self.optimizer_step_begin()))
        self._hooks.append(_optim.register_optimizer_step_post_hook(
            lambda opt, args, kwargs: self.optimizer_step_end()))
        self._patch_parameter()
        self._patch_loader()
        self._active = True
        return self

    def __exit__(self, *exc):
        if not self._active:
            return False
        self._active = False
        try:
            self.finish()
        finally:
            for h in self._hooks:
                h.remove()
            self._hooks.clear()
            self._unpatch_parameter()
            self._unpatch_loader()
            self._dispatch.__exit__(None, None, None)
            self._functions.__exit__(None, None, None)
        return False

    def _patch_parameter(self):
        # nn.Parameter(t) makes a new tensor object for t's data: keep it on the device.
        dev = self
        self._param_new = torch.nn.Parameter.__new__

        def __new__(cls, data=None, requires_grad=True):
            p = dev._param_new(cls, data, requires_grad)
            if data is not None:
                e = dev.handles.get(id(data))
                if e is not None:
                    dev.bind(p, e[0])
            return p

        torch.nn.Parameter.__new__ = __new__

    def _unpatch_parameter(self):
        torch.nn.Parameter.__new__ = self._param_new


def _name_in(frame, t):
    try:
        for k, v in frame.f_locals.items():
            if v is t:
                return k
    except Exception:  # noqa: BLE001 - a frame whose locals cannot be read: no name
        pass
    return None


# ---------------------------------------------------------------------------------------------


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
        else:
            dev.read([args[0]], "item" if "scalar" in info.name else "bool", frame)
        return func(*args, **kwargs)

    def _dynamic(self, func, info, args, kwargs):
        dev = self.dev
        frame = user_frame()
        tensors = [a for a in _flat(args, kwargs) if dev.is_device(a)]
        dev.read(tensors, _short(info.name) + " (runs on the host)", frame)
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
        out = func(*args, **kwargs)
        if not dev.is_device(src):
            return out
        file, line = (_USER_CODE[frame.f_code], frame.f_lineno) if frame else (None, 0)
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


def _short(name):
    return name.split(".")[1] if name.startswith("aten.") else name


def _has_mask(args):
    if len(args) > 1:
        for x in args[1]:
            if isinstance(x, torch.Tensor) and x.dtype in (torch.bool, torch.uint8):
                return True
    return False


def _flat_batch(batch):
    """The tensors in a collated batch: a tensor, or lists, tuples and dicts of them."""
    stack = [batch]
    while stack:
        b = stack.pop()
        if isinstance(b, torch.Tensor):
            yield b
        elif isinstance(b, (list, tuple)):
            stack.extend(b)
        elif isinstance(b, dict):
            stack.extend(b.values())


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


def _called_from_torch() -> bool:
    """Is the code calling the intercepted torch function part of torch itself?"""
    f = sys._getframe(2)
    while f is not None:
        code = f.f_code
        u = _USER_CODE.get(code)
        if u is None:
            u = _user_file(code)
        if u:
            return False
        name = code.co_filename
        if not name.endswith(_SKIP_FILES) and "hpulint" not in name:
            return _norm(name).startswith(_TORCH_DIR)
        f = f.f_back
    return False


def _h_cpu(dev, func, args, kwargs):
    t = args[0]
    if dev.is_device(t):
        dev.read([t], "cpu()", user_frame())
        return _suspended(dev, torch.Tensor.clone, (t,), {})
    return func(*args, **kwargs)


def _reader(what):
    def h(dev, func, args, kwargs):
        t = args[0]
        if isinstance(t, torch.Tensor) and dev.is_device(t):
            dev.read([t], what, user_frame())
            return _suspended(dev, func, args, kwargs)
        return func(*args, **kwargs)

    return h


def _h_equal(dev, func, args, kwargs):
    a, b = args[0], args[1]
    if dev.is_device(a) or dev.is_device(b):
        dev.read([a, b], "torch.equal", user_frame())
        return _suspended(dev, func, args, kwargs)
    return func(*args, **kwargs)


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
    _FUNCS[Tn.backward] = _h_backward
    _FUNCS[torch.autograd.backward] = _h_backward
    _FUNCS[torch.autograd.grad] = _h_backward
    _FUNCS[Tn.data.__set__] = _h_set_data
    _FUNCS[Tn.device.__get__] = _h_device
    for f in (torch.tensor, torch.as_tensor, torch.asarray):
        _UPLOAD_FACTORIES.add(f)


_register()
