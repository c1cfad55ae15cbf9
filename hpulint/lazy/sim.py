"""The simulated lazy device: CPU tensors that behave, for counting purposes, like HPU/XLA ones.

Two torch modes do the work while a replay runs (``modes``):

* ``_Dispatch`` (a TorchDispatchMode) sees every aten op. An op with a device tensor among its
  inputs (or a factory called with ``device="hpu"``) is computed on the CPU as usual *and*
  recorded as a node of the pending graph; its outputs become device tensors. Host reads that
  reach the dispatcher (``_local_scalar_dense`` for ``.item()`` and ``bool()``, ``equal``) and
  ops whose output shape depends on data (``nonzero``, boolean-mask indexing) cut the graph.
* ``_Functions`` (a TorchFunctionMode) sees the Python-level API: ``.to("hpu")``,
  ``device="xla"`` in factories, ``.cpu()``, and host reads that never reach the dispatcher
  (``.tolist()``, ``.numpy()``, printing and formatting a tensor).

``SimDevice`` owns the handles, the pending graph, the cuts, the compilation cache and the
counters and events; how one op is recorded (``recording``), the training-iteration and DataLoader
bookkeeping (``training``) and the metrics (``metrics``) are mixins.
"""
from __future__ import annotations

import time
import weakref

import torch
import torch.optim.optimizer as _optim

# StopReplay, the frame helpers and MetricsMixin are imported from here by the other modules
from .frames import (StopReplay, _user_file, is_cpu_device, is_fake_device,  # noqa: F401
                     is_user_path, user_frame, user_site)  # noqa: F401
from .graph import Data, Handle, Node, Out, canonical, explain
from .metrics import MetricsMixin
from .modes import _Dispatch, _Functions
from .profiles import get_profile
from .recording import Recording
from .scalar_data import ScalarData
from .shapes import NO_COMPUTE
from .training import LoaderTags, TrainingMarks

class ExecutionNotAllowed(RuntimeError):
    """A host read inside ``torch_xla.compile(full_graph=True)``: the real engine refuses it."""


_FALLBACK_READS = ("item", "bool", "int", "float", "index", "torch.equal")


def _fallback_read(what, tensors) -> bool:
    """A read that PyTorch/XLA runs through a CPU fallback (``_local_scalar_dense``, ``equal``,
    the data-dependent ops): its tensors are copied to the host and keep their pending graph.
    ``f"{t:.3f}"`` of a 0-dim tensor is ``t.item()``; ``.cpu()``, printing and ``tolist`` copy
    through ``_to_copy``, which turns the tensor into device data."""
    if what in _FALLBACK_READS or what.endswith("runs on the host)"):
        return True
    if what == "format":
        return all(getattr(t, "ndim", 1) == 0 for t in tensors)
    return False


class _Ref(weakref.ref):
    __slots__ = ("key",)


# ---------------------------------------------------------------------------------------------


class SimDevice(Recording, TrainingMarks, LoaderTags, MetricsMixin):
    """Counts what a lazy engine would compile, execute and transfer for the code it observes."""

    engine = "sim"

    def __init__(self, profile="hpu", max_steps=None, scalars=None, compute=True):
        self.profile = get_profile(profile, scalars)
        self.scalar_data = ScalarData(self.profile.scalar_cache)  # Python scalars as device data
        self.compute = compute  # False: device ops give their results' layout only (shapes.py)
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
        self.uploads = 0  # host tensors moved to the device (TransferToDeviceTime)
        self.graph_sizes = []  # nodes of every executed graph (TensorsGraphSize), last 1024
        self.fallbacks = {}  # op -> times it ran on the host (PyTorch/XLA's aten:: counters)
        self.notes = []  # what the report should say about how the script was run
        # modes the PyTorch/XLA stand-ins switch
        self.eager = False  # torch_xla.experimental.eager_mode(True): every op its own graph
        # False while MpDeviceLoader / send_cpu_data_to_device upload a batch: XLA makes the
        # tensors from the host data directly, no graph even in eager mode (measured, 2.9)
        self.eager_upload = True
        self.allow_execution = True  # False inside torch_xla.compile(full_graph=True)
        # state
        self.handles = {}  # id(tensor) -> (Handle, _Ref)
        self.pending = {}  # ordered set of Handles whose value is (or may be) a pending node
        self.deferred = {}  # uploads still host data (profile.deferred_uploads), unused so far
        self.used_uploads = {}  # deferred uploads used since the last step marker
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
        if t.dim() == 0 and self.profile.scalars_are_data and t.dtype != torch.bool and \
                not t.is_complex() and self.profile.scalar_is_constant(t.item()):
            # a 0-dim upload of 0, 1 or -1 enters graphs as a constant (IsSpecialScalar in
            # LazyGraphExecutor::GetIrValueForTensor; measured on torch_xla 2.9)
            self.seq += 1
            node = Node("upload-constant", (), (t.item(), str(t.dtype)), file, line, self.bw,
                        self.os, self.seq)
            h = Handle(Out(node, 0))
            self.pending[h] = None  # an IR value: the next step marker computes it
        else:
            h = Handle(Data(tuple(t.shape), t.dtype, (file, line), name))
            if self.profile.deferred_uploads:
                self.deferred[h] = None
            if self.eager and self.eager_upload:
                # eager mode syncs every new device tensor at once: an upload runs a graph of
                # its own, one per shape and dtype (measured on torch_xla 2.9)
                self.seq += 1
                node = Node("device_data", (h.value,), (), file, line, self.bw, self.os,
                            self.seq)
                self.critical += 1
                try:
                    self._execute([Out(node, 0)], ("eager", file, line), "eager")
                finally:
                    self.critical -= 1
        self.bind(t, h)
        self.uploads += 1
        return h

    def use_upload(self, h) -> None:
        """A deferred upload is used: the next step marker syncs it (profile.deferred_uploads)."""
        if self.deferred.pop(h, 0) is None:
            self.used_uploads[h] = None
            self.pending[h] = None

    def wrap_upload(self, h) -> None:
        """A deferred upload wrapped as a new Parameter (a module moved to the device): on
        torch._lazy an IR node until the next step marker syncs it (profile.deferred_uploads)."""
        if self.deferred.pop(h, 0) is None:
            file, line = self._where(None)
            self.seq += 1
            node = Node("lazy.parameter", (h.value,), (), file, line, self.bw, self.os, self.seq)
            self._write(h, Out(node, 0), file, line)

    def fallback(self, op: str) -> None:
        """An op ran on the host (PyTorch/XLA counts it as ``aten::op``)."""
        self.fallbacks[op] = self.fallbacks.get(op, 0) + 1

    def set_eager(self, enable: bool) -> None:
        """Eager mode (PyTorch/XLA): from now on every op runs as soon as it is recorded."""
        self.eager = enable

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
        return (kind, _user_file(frame.f_code), frame.f_lineno)

    def _execute(self, roots, site, step_kind, keeps_graph=False):
        graph = canonical(roots)
        if not graph.nodes and not graph.roots:
            return None
        sig = graph.signature
        if keeps_graph:
            # PyTorch/XLA hashes force_ltc_data into the graph ("the same graph with on/off
            # force_ltc_data should not match"): a read through a CPU fallback never reuses a
            # step marker's graph, nor the other way round
            sig = ("keeps-graph", sig)
        prev = self.last_at_site.get(site)
        prev_seq = self.seq_at_site.get(site, 0)
        self.last_at_site[site] = graph
        self.seq_at_site[site] = self.seq
        n = len(graph.nodes)
        if n > self.max_graph_nodes:
            self.max_graph_nodes = n
        self.graph_sizes.append(n)
        if len(self.graph_sizes) > 2048:
            del self.graph_sizes[:1024]
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
                if b.alive():
                    # the base and the view are both live tensors: both are computed (the view
                    # is recomputed from the base only once the base changes again; measured
                    # on torch_xla 2.9: a slice read after the step runs no graph)
                    roots_h[b] = None
                    roots_h[h] = None
                    continue
                # the view outlives its base: from now on it is a tensor of its own
                self.current(h)
                h.base = None
                h.chain = ()
            roots_h[h] = None
        roots = []
        for h in roots_h:
            v = self.current(h)
            if type(v) is Out or h in self.used_uploads:
                roots.append(v)  # a deferred upload an op used: synced as an output
        self.pending.clear()
        self.used_uploads.clear()
        self.deferred.clear()  # the marker uploads the unused ones too, without a graph
        self._execute(roots, site, what)
        self._materialize(roots_h)
        self._close_growth(f"{what} at line {site[2]}")
        self.mark_steps += 1

    def _sync(self, what, frame):
        file, line = (_user_file(frame.f_code), frame.f_lineno) if frame else (None, 0)
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

    def read(self, tensors, what, frame=None, materialize=None):
        """A host read of device tensors: run the part of the pending graph they need.

        ``materialize``: the read tensors become device data (default: unless the profile keeps
        the graph of a read through a CPU fallback, and this is one)."""
        if frame is None:
            frame = user_frame()
        if materialize is None:
            materialize = not (self.profile.reads_keep_graph and _fallback_read(what, tensors))
        self.critical += 1
        try:
            if self.broken is None:
                return self._read(tensors, what, frame, materialize)
            self._sync(what, frame)
            return True
        except ExecutionNotAllowed:
            raise  # the script's error, as on the real engine
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
        if roots and not self.allow_execution:
            raise ExecutionNotAllowed(
                f"{what} needs the device to run a graph, and torch_xla.compile(full_graph=True) "
                "allows none inside the compiled function")
        if roots:
            if self.profile.reads_keep_ir:
                # the read tensors keep their IR (later graphs recompute it) and leave the
                # pending graph: the next step marker does not compute them
                self._execute(roots, self._site(what, frame), what)
                for h in hs:
                    self.pending.pop(h, None)
            else:
                self._execute(roots, self._site(what, frame), what, keeps_graph=not materialize)
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
            "notes": list(self.notes),
            "scalars": "data" if self.profile.scalars_are_data else "constant",
            "assumptions": ([self.profile.assumption] if self.profile.assumption else []) + (
                [] if self.compute else [NO_COMPUTE]),
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

