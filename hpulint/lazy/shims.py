"""Stand-ins for the Gaudi and PyTorch/XLA Python packages, active only inside a replay.

A script written for a Gaudi (``import habana_frameworks.torch.core as htcore``) or a TPU
(``import torch_xla.core.xla_model as xm``) imports these modules instead of the real ones;
their step markers and metrics talk to the replay's backend (the simulated device, or
``torch._lazy`` with ``--engine ltc``). ``Shims`` puts them in ``sys.modules`` and takes them out
again, restoring whatever was there before.
"""
from __future__ import annotations

import contextlib
import copy
import sys
import types

import torch

from .sim import user_frame

_NAMES = (
    "habana_frameworks",
    "habana_frameworks.torch",
    "habana_frameworks.torch.core",
    "habana_frameworks.torch.hpu",
    "habana_frameworks.torch.hpu.metrics",
    "habana_frameworks.torch.hpex",
    "habana_frameworks.torch.hpex.kernels",
    "torch_xla",
    "torch_xla.core",
    "torch_xla.core.xla_model",
    "torch_xla.debug",
    "torch_xla.debug.metrics",
    "torch_xla.distributed",
    "torch_xla.distributed.parallel_loader",
    "torch_xla.distributed.xla_multiprocessing",
    "torch_xla.runtime",
)


class _Stat:
    """What ``metric_global(name)`` returns: ``stats()`` as Gaudi prints it."""

    def __init__(self, backend, name, start=0):
        self._backend = backend
        self.name = name
        self._start = start

    def _count(self):
        if self.name == "graph_compilation":
            return self._backend.compiles - self._start
        return 0

    def stats(self):
        n = self._count()
        return [("TotalNumber", n), ("TotalTime", 0), ("AvgTime", 0.0)]

    def __repr__(self):
        return f"metric {self.name}: {self.stats()}"


class _LocalStat(_Stat):
    def __enter__(self):
        self._start = self._count() + self._start
        return self

    def __exit__(self, *exc):
        self._end = self._count()
        self._count = lambda: self._end
        return False


def _module(name, doc):
    m = types.ModuleType(name, doc)
    m.__file__ = f"<hpulint shim {name}>"
    if "." not in name or name.count(".") < 3:
        m.__path__ = []  # a package, so that submodules import
    return m


def build(backend) -> dict:
    """The shim modules, bound to ``backend`` (a SimDevice or an LTC observer)."""
    mods = {name: _module(name, f"hpulint verify stand-in for {name}") for name in _NAMES}

    def mark_step(*args, **kwargs):
        backend.mark_step("mark_step", user_frame())

    def sync(*args, **kwargs):
        backend.mark_step("torch_xla.sync", user_frame())

    # -- Gaudi -------------------------------------------------------------------------------
    hf, hft, core = (mods["habana_frameworks"], mods["habana_frameworks.torch"],
                     mods["habana_frameworks.torch.core"])
    hpu, hmetrics = mods["habana_frameworks.torch.hpu"], mods["habana_frameworks.torch.hpu.metrics"]
    hf.torch = hft
    hft.core = core
    hft.hpu = hpu
    core.mark_step = mark_step
    core.is_initialized = lambda: True
    core.hpu = hpu
    hpu.metrics = hmetrics
    hpu.is_available = lambda: True
    hpu.device_count = lambda: 1
    hpu.current_device = lambda: 0
    hpu.set_device = lambda *a, **k: None
    hpu.synchronize = lambda *a, **k: None
    hpu.get_device_name = lambda *a, **k: "GAUDI (hpulint simulated device)"
    hpu.is_initialized = lambda: True
    hmetrics.metric_global = lambda name: _Stat(backend, name)
    hmetrics.metric_localcontext = lambda name: _LocalStat(backend, name)

    # HPU Graphs and FusedSDPA: inert. Nothing is captured or replayed (the model runs in lazy
    # mode, recorded like the rest of the script) and the APIs' input limits are not enforced:
    # the verifier does not model HPU Graphs (docs/verify.md).
    hpu.make_graphed_callables = _make_graphed_callables
    hpu.ModuleCacher = _ModuleCacher
    hpu.wrap_in_hpu_graph = _wrap_in_hpu_graph
    hpu.wrap_in_hpu_graph_func = _wrap_in_hpu_graph
    hpu.sdp_kernel = _sdp_kernel
    hpex, kernels = mods["habana_frameworks.torch.hpex"], mods["habana_frameworks.torch.hpex.kernels"]
    hft.hpex = hpex
    hpex.kernels = kernels
    kernels.FusedSDPA = _FusedSDPA

    # -- PyTorch/XLA -------------------------------------------------------------------------
    tx = mods["torch_xla"]
    xcore, xm = mods["torch_xla.core"], mods["torch_xla.core.xla_model"]
    xdebug, met = mods["torch_xla.debug"], mods["torch_xla.debug.metrics"]
    xdist = mods["torch_xla.distributed"]
    pl = mods["torch_xla.distributed.parallel_loader"]
    xmp = mods["torch_xla.distributed.xla_multiprocessing"]
    xr = mods["torch_xla.runtime"]
    tx.core, tx.debug, tx.distributed, tx.runtime = xcore, xdebug, xdist, xr
    xcore.xla_model = xm
    xdebug.metrics = met
    xdist.parallel_loader = pl
    xdist.xla_multiprocessing = xmp
    tx.__version__ = "0+hpulint"

    def xla_device(n=None, devkind=None):
        return backend.torch_device(n)

    tx.device = lambda index=None: backend.torch_device(index)
    tx.sync = sync
    xm.xla_device = xla_device
    xm.mark_step = mark_step
    xm.get_ordinal = lambda *a, **k: 0
    xm.get_local_ordinal = lambda *a, **k: 0
    xm.xrt_world_size = lambda *a, **k: 1
    xm.is_master_ordinal = lambda *a, **k: True
    xm.xla_device_hw = lambda *a, **k: "CPU"
    xm.wait_device_ops = lambda *a, **k: None
    xm.rendezvous = lambda *a, **k: None
    xm.master_print = lambda *a, **k: print(*a, **{k2: v for k2, v in k.items() if k2 != "fd"})
    xm.reduce_gradients = lambda optimizer, *a, **k: None
    xm.all_reduce = lambda reduce_type, inputs, *a, **k: inputs

    def optimizer_step(optimizer, barrier=False, optimizer_args=None, *args, **kwargs):
        loss = optimizer.step(**(optimizer_args or {}))
        if barrier:
            backend.mark_step("optimizer_step(barrier=True)", user_frame())
        return loss

    xm.optimizer_step = optimizer_step

    def send_cpu_data_to_device(data, device, *a, **k):
        return _to_device(data, device)

    xm.send_cpu_data_to_device = send_cpu_data_to_device
    xr.world_size = lambda: 1
    xr.global_ordinal = lambda: 0
    xr.local_ordinal = lambda: 0
    xr.device_type = lambda: "CPU"
    xr.use_spmd = lambda *a, **k: None
    xr.is_spmd = lambda: False

    def spawn(fn, args=(), nprocs=None, start_method="spawn", **kwargs):
        fn(0, *args)

    xmp.spawn = spawn

    class PerDeviceLoader:
        """``MpDeviceLoader``'s iterator: a step marker before every batch and at the end."""

        def __init__(self, loader, device):
            self._it = iter(loader)
            self._len = len(loader) if hasattr(loader, "__len__") else None
            self._device = device

        def __iter__(self):
            return self

        def __len__(self):
            return self._len

        def __next__(self):
            backend.mark_step("MpDeviceLoader", user_frame())
            try:
                batch = next(self._it)
            except StopIteration:
                backend.mark_step("MpDeviceLoader", user_frame())
                raise
            return _to_device(batch, self._device)

        next = __next__

    class ParallelLoader:
        def __init__(self, loader, devices, *args, **kwargs):
            self._loader = loader
            self._devices = list(devices)

        def per_device_loader(self, device):
            return PerDeviceLoader(self._loader, device)

        def per_device_samples(self):
            return len(self._loader)

    class MpDeviceLoader:
        def __init__(self, loader, device, **kwargs):
            self._loader = loader
            self._device = device

        def __iter__(self):
            return PerDeviceLoader(self._loader, self._device)

        def __len__(self):
            return len(self._loader)

    pl.PerDeviceLoader = PerDeviceLoader
    pl.ParallelLoader = ParallelLoader
    pl.MpDeviceLoader = MpDeviceLoader

    def metric_data(name):
        n = backend.metric_count(name)
        return None if not n else (n, 0, [])

    def counter_value(name):
        n = backend.counter(name)
        return n or None

    met.metric_data = metric_data
    met.counter_value = counter_value
    met.metric_names = lambda: [n for n in ("CompileTime", "ExecuteTime", "TransferFromDeviceTime")
                                if backend.metric_count(n)]
    met.counter_names = lambda: [n for n in ("MarkStep", "CachedCompile", "UncachedCompile")
                                 if backend.counter(n)]

    def metrics_report():
        lines = []
        for n in met.metric_names():
            lines.append(f"Metric: {n}\n  TotalSamples: {backend.metric_count(n)}")
        for n in met.counter_names():
            lines.append(f"Counter: {n}\n  Value: {backend.counter(n)}")
        return "\n".join(lines) + "\n"

    met.metrics_report = metrics_report
    met.short_metrics_report = lambda *a, **k: metrics_report()
    met.clear_all = met.clear_metrics = met.clear_counters = lambda: None
    return mods


def _make_graphed_callables(callables, sample_args, *args, **kwargs):
    return callables


class _ModuleCacher:
    """``ModuleCacher(max_graphs=10)(model=model, inplace=True)``: returns the model as it is."""

    def __init__(self, max_graphs=10, *args, **kwargs):
        self.max_graphs = max_graphs

    def __call__(self, model, inplace=True, *args, **kwargs):
        return model if inplace else copy.copy(model)


def _wrap_in_hpu_graph(module, *args, **kwargs):
    return module


@contextlib.contextmanager
def _sdp_kernel(*args, **kwargs):
    yield


class _FusedSDPA:
    """``FusedSDPA.apply(q, k, v, attn_mask, dropout_p, is_causal, scale, softmax_mode,
    recompute_mode, ...)``: the attention it fuses, written out in plain ops that every engine
    records (the operation modes change memory use on a Gaudi, not the result)."""

    @staticmethod
    def apply(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
              *args, **kwargs):
        scale = query.shape[-1] ** -0.5 if scale is None else scale
        scores = query @ key.transpose(-2, -1) * scale
        if is_causal:  # -inf above the diagonal
            scores = scores + torch.full((query.shape[-2], key.shape[-2]), float("-inf"),
                                         dtype=scores.dtype, device=query.device).triu(1)
        if attn_mask is not None:
            if attn_mask.dtype == torch.bool:
                scores = scores.masked_fill(~attn_mask, float("-inf"))
            else:
                scores = scores + attn_mask
        attn = torch.softmax(scores, dim=-1)
        if dropout_p:
            attn = torch.nn.functional.dropout(attn, dropout_p)
        return attn @ value


def _compile(model=None, **kwargs):
    """``torch.compile`` inside a replay: not simulated, the code runs as it is (lazy mode)."""
    if model is None:
        return lambda fn: fn
    return model


def _to_device(data, device):
    if isinstance(data, torch.Tensor):
        return data.to(device)
    if isinstance(data, (list, tuple)):
        out = [_to_device(x, device) for x in data]
        return type(data)(out) if not hasattr(data, "_fields") else type(data)(*out)
    if isinstance(data, dict):
        return type(data)((k, _to_device(v, device)) for k, v in data.items())
    return data


class Shims:
    """Install the stand-in modules (and ``torch.hpu``) for the duration of a ``with`` block."""

    def __init__(self, backend):
        self.backend = backend
        self._saved = {}
        self._had_torch_hpu = False
        self._torch_hpu = None

    def __enter__(self):
        mods = build(self.backend)
        for name, mod in mods.items():
            self._saved[name] = sys.modules.get(name)
            sys.modules[name] = mod
        self._had_torch_hpu = hasattr(torch, "hpu")
        self._torch_hpu = getattr(torch, "hpu", None)
        torch.hpu = mods["habana_frameworks.torch.hpu"]
        # torch.autocast("hpu") / ("xla"): the replay computes on the CPU, so cast like the CPU
        self._autocast_init = torch.amp.autocast_mode.autocast.__init__
        plain = self._autocast_init

        def __init__(self_, device_type, *args, **kwargs):
            if device_type in ("hpu", "xla"):
                device_type = "cpu"
            plain(self_, device_type, *args, **kwargs)

        torch.amp.autocast_mode.autocast.__init__ = __init__
        # torch.compile is not simulated: dynamo cannot trace the replay's modes, so the
        # compiled code runs as it is, recorded like the rest of the script
        self._compile = torch.compile
        torch.compile = _compile
        return self

    def __exit__(self, *exc):
        for name, old in self._saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
        # submodules the script imported from our packages (none exist, but be tidy)
        self._saved.clear()
        torch.amp.autocast_mode.autocast.__init__ = self._autocast_init
        torch.compile = self._compile
        if self._had_torch_hpu:
            torch.hpu = self._torch_hpu
        else:
            try:
                del torch.hpu
            except AttributeError:
                pass
        return False
