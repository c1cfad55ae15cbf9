"""``--engine ltc``: run the script on PyTorch's real Lazy Tensor Core (``torch._lazy``).

The TorchScript backend of ``torch._lazy`` is a real lazy engine: it records IR, cuts at
``mark_step`` and at host reads, and keeps a compilation cache whose misses it counts as
``UncachedCompile``. The script's ``"hpu"``/``"xla"`` devices are mapped to ``"lazy"``.

A TorchDispatchMode cannot be used on lazy tensors (view ops such as ``steps[i]`` fail with an
``as_strided`` error), so this observer works at the TorchFunctionMode layer only: it maps
devices, counts the host reads the script makes (``.item()``, printing, ``.cpu()``...) and reads
the engine's own counters around every step marker and read to attribute compilations to lines.

Two documented differences from the ``xla`` profile show up in counts (see docs/verify.md):
LTC keeps *every* Python scalar as device data (``FLAGS_torch_lazy_handle_special_scalars`` is
off by default, so even 0 and 1 are data), and LTC defers uploads: ``.to("lazy")`` keeps the CPU
tensor and makes it device data only when a graph uses it.
"""
from __future__ import annotations

import time

import torch
from torch.overrides import TorchFunctionMode

from .sim import MetricsMixin, StopReplay, is_cpu_device, is_fake_device, user_frame, _user_file

_INITIALISED = False


def _init():
    global _INITIALISED
    import torch._lazy
    import torch._lazy.metrics
    import torch._lazy.ts_backend

    if not _INITIALISED:
        torch._lazy.ts_backend.init()
        _INITIALISED = True


def _counter(name):
    import torch._lazy.metrics

    return torch._lazy.metrics.counter_value(name) or 0


class LtcDevice(MetricsMixin):
    engine = "ltc"

    def __init__(self, profile="hpu", max_steps=None):
        _init()
        import torch._lazy.metrics

        torch._lazy.metrics.reset()
        self.profile_name = profile if isinstance(profile, str) else profile.name
        self.max_steps = max_steps
        self.compiles = 0
        self.cached = 0
        self.syncs = 0
        self.mark_steps = 0
        self.max_graph_nodes = None  # the engine does not tell us
        self.events = []
        self.sync_sites = {}
        self.pending_at_exit = None
        self.sites_seen = set()
        self.critical = 0
        self.interrupt = None
        self.uploads = 0  # CPU tensors moved to the device with .to()
        self.uploads_at_mark = 0
        self.started = time.perf_counter()
        self._mode = _LtcFunctions(self)
        self._active = False
        self._hooks = []
        self.optimizer_steps = 0
        self.backward_passes = 0

    # -- the backend interface the shims use --------------------------------------------------

    def torch_device(self, index=None):
        return torch.device("lazy", index or 0)

    def _observe(self, before_uncached, before_cached, what, frame):
        after = _counter("UncachedCompile")
        self.cached = _counter("CachedCompile")
        file, line = (_user_file(frame.f_code), frame.f_lineno) if frame else (None, 0)
        site = (what, file, line)
        for _ in range(after - before_uncached):
            self.compiles += 1
            self.events.append({
                "kind": "compile", "n": self.compiles, "recompile": site in self.sites_seen,
                "site": what, "file": file, "line": line, "step": self.mark_steps, "nodes": None,
                "uploads_pending": self.uploads - self.uploads_at_mark,
                "cause": {"kind": "unknown", "changes": [],
                          "summary": "real engine: cause not analysed"},
            })
        if after > before_uncached or _counter("CachedCompile") > before_cached:
            self.sites_seen.add(site)

    def mark_step(self, what="mark_step", frame=None):
        import torch._lazy

        if frame is None:
            frame = user_frame()
        u, c = _counter("UncachedCompile"), _counter("CachedCompile")
        self.critical += 1
        try:
            torch._lazy.mark_step()
            self._observe(u, c, what, frame)
            self.uploads_at_mark = self.uploads
            self.mark_steps += 1
        finally:
            self.critical -= 1
        if self.interrupt is not None:
            reason, self.interrupt = self.interrupt, None
            raise StopReplay(reason)
        if self.max_steps is not None and self.mark_steps >= self.max_steps:
            raise StopReplay(f"stopped after {self.mark_steps} step markers (--max-steps)")

    def read(self, func, args, kwargs, what):
        frame = user_frame()
        u, c = _counter("UncachedCompile"), _counter("CachedCompile")
        out = func(*args, **kwargs)
        self._observe(u, c, what, frame)
        file, line = (_user_file(frame.f_code), frame.f_lineno) if frame else (None, 0)
        self.syncs += 1
        key = (file, line, what)
        ev = self.sync_sites.get(key)
        if ev is None:
            ev = self.sync_sites[key] = {"kind": "sync", "what": what, "file": file, "line": line,
                                         "count": 0, "steps": [], "first_step": self.mark_steps}
        ev["count"] += 1
        if not ev["steps"] or ev["steps"][-1] != self.mark_steps:
            ev["steps"].append(self.mark_steps)
        return out


    # -- results ---------------------------------------------------------------------------------

    def finish(self):
        pass

    def all_events(self):
        return self.events + sorted(self.sync_sites.values(), key=lambda e: (e["line"], e["what"]))

    def summary(self) -> dict:
        self.compiles = _counter("UncachedCompile")  # the engine's own count is the truth
        self.cached = _counter("CachedCompile")
        return {
            "profile": self.profile_name,
            "engine": self.engine,
            "compiles": self.compiles,
            "cached": self.cached,
            "syncs": self.syncs,
            "mark_steps": self.mark_steps,
            "max_graph_nodes": self.max_graph_nodes,
            "events": self.all_events(),
            "fallback_ops": self.fallback_ops(),
            "engine_counters": self.engine_counters(),
            "optimizer_steps": self.optimizer_steps,
            "backward_passes": self.backward_passes,
        }

    @staticmethod
    def engine_counters() -> dict:
        """Every counter of ``torch._lazy.metrics`` as the engine left it (``MarkStep``,
        ``aten::_local_scalar_dense``: the scalar reads, ``DeviceDataCacheMiss``...)."""
        import torch._lazy.metrics

        return {n: _counter(n) for n in torch._lazy.metrics.counter_names()}

    @staticmethod
    def fallback_ops() -> dict:
        """Ops the TorchScript backend has no lowering for: they ran eagerly on the CPU."""
        import torch._lazy.metrics

        names = torch._lazy.metrics.counter_names()
        return {n[len("aten::"):]: _counter(n) for n in names
                if n.startswith("aten::") and n != "aten::_local_scalar_dense"}

    def __enter__(self):
        import torch.optim.optimizer as optim

        def counted(*args):
            self.optimizer_steps += 1

        self._hooks.append(optim.register_optimizer_step_post_hook(counted))
        self._mode.__enter__()
        self._active = True
        return self

    def __exit__(self, *exc):
        if self._active:
            self._active = False
            self._mode.__exit__(None, None, None)
            for h in self._hooks:
                h.remove()
            self._hooks.clear()
        return False


def _lazy(d):
    return "lazy" if isinstance(d, str) else torch.device("lazy")


def _is_lazy(t):
    return isinstance(t, torch.Tensor) and t.device.type == "lazy"


class _LtcFunctions(TorchFunctionMode):
    def __init__(self, dev):
        super().__init__()
        self.dev = dev

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        try:
            what = _READS.get(func)
        except TypeError:
            what = None
        if what is not None:
            if args and _is_lazy(args[0]) or (what in ("torch.equal", "torch.allclose") and _is_lazy(args[1])):
                return self.dev.read(func, args, kwargs, what)
            return func(*args, **kwargs)
        if func is torch.Tensor.to:
            return self._to(func, args, kwargs)
        if func is torch.Tensor.backward or func is torch.autograd.backward:
            self.dev.backward_passes += 1
        d = kwargs.get("device")
        if d is not None and is_fake_device(d):
            kwargs = dict(kwargs)
            kwargs["device"] = _lazy(d)
        # an op without a lowering runs on the CPU, which may compile the graph its inputs need
        u, c = _counter("UncachedCompile"), _counter("CachedCompile")
        out = func(*args, **kwargs)
        if _counter("UncachedCompile") != u:
            name = getattr(func, "__name__", "op")
            self.dev._observe(u, c, f"{name} (CPU fallback)", user_frame())
        return out

    def _to(self, func, args, kwargs):
        t = args[0]
        rest = list(args[1:])
        if "device" in kwargs and is_fake_device(kwargs["device"]):
            kwargs = dict(kwargs)
            kwargs["device"] = _lazy(kwargs["device"])
        elif rest and isinstance(rest[0], (str, torch.device)) and is_fake_device(rest[0]):
            rest[0] = _lazy(rest[0])
        target = kwargs.get("device", rest[0] if rest else None)
        if not _is_lazy(t) and isinstance(target, (str, torch.device)) and \
                torch.device(target).type == "lazy":
            self.dev.uploads += 1
        if _is_lazy(t) and target is not None and not isinstance(target, torch.dtype) \
                and not isinstance(target, torch.Tensor) and is_cpu_device(target):
            return self.dev.read(func, (t, *rest), kwargs, "to(cpu)")
        return func(t, *rest, **kwargs)


_READS = {}


def _register():
    Tn = torch.Tensor
    for name, what in (("item", "item"), ("tolist", "tolist"), ("numpy", "numpy"),
                       ("__repr__", "print"), ("__format__", "format"), ("__bool__", "bool"),
                       ("__int__", "int"), ("__float__", "float"), ("__index__", "index"),
                       ("__array__", "numpy"), ("cpu", "cpu()")):
        fn = getattr(Tn, name, None)
        if fn is not None:
            _READS[fn] = what
    _READS[torch.equal] = "torch.equal"
    _READS[Tn.equal] = "torch.equal"
    _READS[torch.allclose] = "torch.allclose"
    _READS[Tn.allclose] = "torch.allclose"


_register()
