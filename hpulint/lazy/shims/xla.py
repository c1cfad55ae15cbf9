"""Stand-ins for PyTorch/XLA 2.9's Python API, for a replay on one device.

The list comes from torch_xla's public modules and from what its ``examples/`` and
``test/test_train_*.py`` import. Semantics follow torch_xla's own Python code (2.9):

* ``torch_xla.sync()`` / ``xm.mark_step()`` cut the graph, then run the step closures queued by
  ``xm.add_step_closure`` (torch_xla.py ``sync``: ``_run_step_closures`` after the step marker).
* ``torch_xla.compile(f)`` (and ``torch_xla.step()``): eager mode off inside, a sync before
  (``_clear_pending_ops_before_compile``) and after; ``full_graph=True`` forbids host reads inside.
* ``torch_xla.experimental.eager_mode(True)``: every op runs as a graph of its own.
* ``xmp.spawn`` / ``torch_xla.launch``: the function runs in this process for device 0.
* ``MpDeviceLoader``: a step marker before every batch, again when the loader runs out, and once
  more as it stops (distributed/parallel_loader.py); batches are moved with ``.to(device)``.
* ``debug.profiler.StepTrace`` syncs on exit; ``RateTracker``, ``SampleGenerator``,
  ``test.test_utils`` are the host-side helpers, rewritten.
* ``debug.metrics``: the replay's counters under PyTorch/XLA's names, and ``metrics_report()``
  in its text format (the simulated device has no times: durations print as zero).

* ``distributed.spmd`` on one device: annotations accepted, nothing sharded (xla_spmd.py).
* ``all_reduce``, ``all_gather``, ``rendezvous``, ``mesh_reduce``, ``save`` on one replica: the
  device work PyTorch/XLA does for them (xla_collectives.py).

Anything else under ``torch_xla`` is named as not stood in (SPMD over several devices, FSDP,
Pallas kernels, scan, collectives across devices, the ``_XLAC`` internals beyond the few listed here).
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import os
import sys
import time
from datetime import datetime

import torch

from ..frames import user_frame
from ..metrics import format_report
from .base import NotStoodIn, to_device
from .xla_collectives import build_collectives

VERSION = "2.9.0+hpulint"


class XlaState:
    """What the PyTorch/XLA stand-ins keep between calls: step closures, metric baselines."""

    def __init__(self, backend):
        self.backend = backend
        self.closures = []
        self.baseline = {}

    def sync(self, what, frame=None):
        self.backend.mark_step(what, frame if frame is not None else user_frame())
        closures, self.closures = self.closures, []
        for closure in closures:
            closure()

    def eager(self) -> bool:
        return bool(getattr(self.backend, "eager", False))

    def set_eager(self, enable: bool) -> None:
        setter = getattr(self.backend, "set_eager", None)
        if setter is not None:
            setter(bool(enable))
        elif enable:
            raise NotStoodIn("torch_xla.experimental.eager_mode",
                             f"eager mode on --engine {self.backend.engine}")


def build(reg, backend) -> XlaState:
    state = XlaState(backend)
    tx = reg.module("torch_xla")
    tx.__version__ = VERSION
    _top(reg, tx, state, backend)
    _xla_model(reg, state, backend)
    _runtime(reg)
    _loaders(reg, state)
    _metrics(reg, state, backend)
    _helpers(reg, state)
    from .xla_spmd import build_spmd

    build_spmd(reg, state)  # after _runtime: replaces use_spmd and is_spmd
    return state


# -- torch_xla ----------------------------------------------------------------------------------


def _top(reg, tx, state, backend):
    def device(index=None):
        return backend.torch_device(index)

    def sync(wait=False, reset_scope=True):
        state.sync("torch_xla.sync")

    def compile(f=None, full_graph=False, name=None, max_different_graphs=None):  # noqa: A001
        @contextlib.contextmanager
        def _compile():
            frame = user_frame()
            saved_eager = state.eager()
            saved_allow = getattr(backend, "allow_execution", True)
            state.set_eager(False)
            state.sync("torch_xla.compile: pending ops", frame)
            backend.allow_execution = not full_graph
            try:
                yield
            finally:
                backend.allow_execution = saved_allow
                state.sync("torch_xla.compile", frame)
                state.set_eager(saved_eager)

        return _compile() if f is None else _compile()(f)

    def launch(fn, args=(), start_method="spawn", debug_single_process=False):
        return fn(0, *args)

    tx.device = device
    tx.devices = lambda: [backend.torch_device(0)]
    tx.real_devices = lambda: ["CPU:0"]
    tx.device_count = lambda: 1
    tx.sync = sync
    tx.compile = compile
    tx.step = lambda: compile()
    tx.manual_seed = lambda seed, device=None: torch.manual_seed(seed)
    tx.launch = launch

    exp, eager = reg.module("torch_xla.experimental"), reg.module("torch_xla.experimental.eager")

    @contextlib.contextmanager
    def eager_mode_context(enable):
        saved = state.eager()
        state.set_eager(enable)
        try:
            yield saved
        finally:
            state.set_eager(saved)

    for m in (exp, eager):
        m.eager_mode = state.set_eager
        m.is_eager_mode = state.eager
        m.eager_mode_context = eager_mode_context

    c = reg.module("torch_xla._XLAC")
    c._xla_metrics_report = lambda: format_report(backend, state.baseline)
    c._xla_get_default_device = lambda: "xla:0"
    c._get_use_eager_mode = state.eager
    c._set_use_eager_mode = state.set_eager
    tx._XLAC = c

    # the openxla dynamo backend: torch.compile(backend="openxla") runs the code as it is (the
    # replay's torch.compile stand-in), so importing the backend module only has to work
    reg.module("torch_xla._dynamo")
    reg.module("torch_xla._dynamo.dynamo_backend2")


# -- torch_xla.core.xla_model -------------------------------------------------------------------


class RateTracker:
    """``xm.RateTracker``: examples per second, smoothed (host-side arithmetic only)."""

    def __init__(self, smooth_factor=None):
        self._smooth_factor = 0.4 if smooth_factor is None else smooth_factor
        self._start_time = time.time()
        self._partial_time = self._start_time
        self._partial_count = 0.0
        self._partial_rate = None
        self._count = 0.0

    def add(self, count):
        self._count += count

    def rate(self):
        now = time.time()
        delta = now - self._partial_time
        if delta <= 0:
            return 0.0
        current = self._count / delta
        if self._partial_rate is not None:
            current = (1 - self._smooth_factor) * current + self._smooth_factor * self._partial_rate
        self._partial_count += self._count
        self._count = 0.0
        self._partial_time = now
        self._partial_rate = current
        return current

    def global_rate(self):
        delta = time.time() - self._start_time
        return (self._partial_count + self._count) / delta if delta > 0 else 0.0


def _xla_model(reg, state, backend):
    xm = reg.module("torch_xla.core.xla_model")
    reg.module("torch_xla.core")

    def mark_step(wait=False, reset_scope=True):
        state.sync("mark_step")

    def optimizer_step(optimizer, barrier=False, optimizer_args={}, groups=None,  # noqa: B006
                       pin_layout=True):
        loss = optimizer.step(**(optimizer_args or {}))
        if barrier:
            state.sync("optimizer_step(barrier=True)")
        return loss

    def add_step_closure(closure, args=(), run_async=False):
        state.closures.append(functools.partial(closure, *args))

    def collective_broadcast(tensors, root_ordinal=0, groups=None, pin_layout=True):
        # xla_model.py: every replica multiplies by 1 (the root) or 0, then all-reduces
        with torch.no_grad():
            scale = torch.tensor(1 if root_ordinal == 0 else 0, dtype=tensors[0].dtype)
            for t in tensors:
                t.mul_(scale.to(t.device))

    def broadcast_master_param(model):
        collective_broadcast(list(itertools.chain(model.parameters(), model.buffers())))

    def master_print(*args, fd=sys.stdout, finalizer=None):
        print(*args, file=fd)

    xm.xla_device = lambda n=None, devkind=None: backend.torch_device(n)
    xm.get_xla_supported_devices = lambda devkind=None, max_devices=None: ["xla:0"]
    xm.xla_device_hw = lambda device=None: "CPU"
    xm.is_xla_tensor = lambda t: isinstance(t, torch.Tensor) and t.device.type == "xla"
    xm.xrt_world_size = lambda *a, **k: 1
    xm.get_ordinal = lambda *a, **k: 0
    xm.get_local_ordinal = lambda *a, **k: 0
    xm.is_master_ordinal = lambda local=True: True
    xm.master_print = master_print
    xm.mark_step = mark_step
    xm.wait_device_ops = lambda devices=[]: None  # noqa: B006
    xm.optimizer_step = optimizer_step
    xm.reduce_gradients = lambda optimizer, groups=None, pin_layout=True: None
    xm.collective_broadcast = collective_broadcast
    xm.broadcast_master_param = broadcast_master_param
    xm.add_step_closure = add_step_closure
    xm.RateTracker = RateTracker
    xm.set_rng_state = lambda seed, device=None: torch.manual_seed(seed)
    xm.get_rng_state = lambda device=None: torch.initial_seed()
    xm.get_memory_info = lambda device=None: {"bytes_used": 0, "bytes_limit": 0,
                                               "peak_bytes_used": 0}
    xm.send_cpu_data_to_device = lambda data, device, *a, **k: _send(state, data, device)
    build_collectives(xm, state, backend)  # all_reduce, all_gather, rendezvous, mesh_reduce, save
    for i, name in enumerate(("REDUCE_SUM", "REDUCE_MUL", "REDUCE_AND", "REDUCE_OR", "REDUCE_MIN",
                              "REDUCE_MAX")):
        setattr(xm, name, name[7:].lower())


# -- torch_xla.runtime ------------------------------------------------------------------------


def _runtime(reg):
    xr = reg.module("torch_xla.runtime")
    one = lambda *a, **k: 1  # noqa: E731
    zero = lambda *a, **k: 0  # noqa: E731
    for name in ("world_size", "global_device_count", "global_runtime_device_count",
                 "local_device_count", "addressable_device_count",
                 "addressable_runtime_device_count", "local_process_count", "process_count"):
        setattr(xr, name, one)
    for name in ("global_ordinal", "local_ordinal", "process_index", "host_index"):
        setattr(xr, name, zero)
    xr.device_type = lambda: "CPU"
    xr.is_bf16_supported = lambda: True
    xr.is_spmd = lambda: False
    xr.initialize_cache = lambda path, readonly=False: None
    xr.get_num_cached_compilation_graph = lambda: 0


# -- loaders --------------------------------------------------------------------------------------


def _send(state, data, device):
    """A batch moved as XLA's loaders move it: tensors made from host data, no eager graph."""
    backend = state.backend
    prev = getattr(backend, "eager_upload", None)
    if prev is None:
        return to_device(data, device)
    backend.eager_upload = False
    try:
        return to_device(data, device)
    finally:
        backend.eager_upload = prev


def _loaders(reg, state):
    pl = reg.module("torch_xla.distributed.parallel_loader")
    reg.module("torch_xla.distributed")

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
            state.sync("MpDeviceLoader")
            try:
                batch = next(self._it)
            except StopIteration:
                state.sync("MpDeviceLoader")
                raise
            return _send(state, batch, self._device)

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

    pl.PerDeviceLoader, pl.ParallelLoader, pl.MpDeviceLoader = \
        PerDeviceLoader, ParallelLoader, MpDeviceLoader

    xmp = reg.module("torch_xla.distributed.xla_multiprocessing")

    def spawn(fn, args=(), nprocs=None, join=True, daemon=False, start_method="spawn"):
        return fn(0, *args)

    xmp.spawn = spawn
    reg.module("torch_xla.distributed.xla_backend")  # importing it registers a backend: nothing to do

    su = reg.module("torch_xla.utils.utils")
    reg.module("torch_xla.utils")

    class SampleGenerator:
        """``xu.SampleGenerator(data, sample_count)``: the same ``data`` ``sample_count`` times."""

        def __init__(self, data, sample_count):
            self._data = data
            self._sample_count = sample_count
            self._count = 0

        def __iter__(self):
            return SampleGenerator(self._data, self._sample_count)

        def __len__(self):
            return self._sample_count

        def __next__(self):
            if self._count >= self._sample_count:
                raise StopIteration
            self._count += 1
            return self._data

        next = __next__

    def getenv_as(name, type, defval=None):  # noqa: A002
        env = os.environ.get(name)
        if env is None:
            return defval
        return env.lower() in ("1", "true", "yes") if type is bool else type(env)

    su.SampleGenerator = SampleGenerator
    su.getenv_as = getenv_as
    su.check_env_flag = lambda name, default="": os.environ.get(name, default).upper() in (
        "ON", "1", "YES", "TRUE", "Y")


# -- debug.metrics, debug.profiler ---------------------------------------------------------------


def _metrics(reg, state, backend):
    met = reg.module("torch_xla.debug.metrics")
    reg.module("torch_xla.debug")

    def data(name):
        return backend.xla_metrics().get(name)

    def metric_data(name):
        d = data(name)
        if d is None or d[0] - state.baseline.get(name, 0) <= 0:
            return None
        return (d[0] - state.baseline.get(name, 0), d[1], d[2])

    def counter_value(name):
        v = backend.xla_counters().get(name, 0) - state.baseline.get(name, 0)
        return v if v > 0 else None

    def clear_metrics():
        for name, d in backend.xla_metrics().items():
            state.baseline[name] = d[0]

    def clear_counters():
        for name, v in backend.xla_counters().items():
            state.baseline[name] = v

    def clear_all():
        clear_metrics()
        clear_counters()

    met.metric_data = metric_data
    met.counter_value = counter_value
    met.metric_names = lambda: [n for n in backend.xla_metrics() if metric_data(n)]
    met.counter_names = lambda: [n for n in backend.xla_counters() if counter_value(n)]
    met.metrics_report = lambda: format_report(backend, state.baseline)
    met.short_metrics_report = lambda counter_names=None, metric_names=None: format_report(
        backend, state.baseline,
        counters=counter_names or ["CachedCompile", "MarkStep", "DynamoSyncInputExecuteTime"],
        metrics=metric_names or ["CompileTime", "ExecuteTime", "ExecuteReplicatedTime",
                                 "TransferToDeviceTime", "TransferFromDeviceTime"])
    met.clear_all, met.clear_metrics, met.clear_counters = clear_all, clear_metrics, clear_counters
    met.executed_fallback_ops = lambda: sorted(
        n for n in backend.xla_counters() if n.startswith("aten::") and counter_value(n))

    xp = reg.module("torch_xla.debug.profiler")

    class Trace(contextlib.ContextDecorator):
        def __init__(self, name, **kwargs):
            self.name = name

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    class StepTrace(Trace):
        """Syncs on exit, like the real one (debug/profiler.py)."""

        def __exit__(self, *exc):
            state.sync("StepTrace")
            return False

    def trace_me(scope):
        return lambda func: func

    xp.start_server = lambda port, only_on_master=True: object()
    xp.Trace, xp.StepTrace, xp.trace_me = Trace, StepTrace, trace_me
    xp.trace = xp.trace_detached = lambda *a, **k: None


# -- test_utils, amp ---------------------------------------------------------------------------


def _helpers(reg, state):
    tu = reg.module("torch_xla.test.test_utils")
    reg.module("torch_xla.test")

    def now(format="%H:%M:%S"):  # noqa: A002
        return datetime.now().strftime(format)

    def print_training_update(device, step, loss, rate, global_rate, epoch=None,
                              summary_writer=None):
        items = ["Training", f"Device={device}/0", f"Epoch={epoch}" if epoch is not None else None,
                 f"Step={step}", f"Loss={loss:.5f}", f"Rate={rate:.2f}",
                 f"GlobalRate={global_rate:.2f}", f"Time={now()}"]
        print("|", " ".join(i for i in items if i), flush=True)

    def print_test_update(device, accuracy, epoch=None, step=None):
        items = ["Test", f"Device={device}/0", f"Step={step}" if step is not None else None,
                 f"Epoch={epoch}" if epoch is not None else None,
                 f"Accuracy={accuracy:.2f}" if accuracy is not None else None, f"Time={now()}"]
        print("|", " ".join(i for i in items if i), flush=True)

    def get_summary_writer(logdir):
        if logdir:
            from tensorboardX import SummaryWriter

            return SummaryWriter(log_dir=logdir)
        return None

    def write_to_summary(summary_writer, global_step=None, dict_to_write={},  # noqa: B006
                         write_xla_metrics=False):
        if summary_writer is None:
            return
        for k, v in dict_to_write.items():
            summary_writer.add_scalar(k, v, global_step)

    def close_summary_writer(summary_writer):
        if summary_writer is not None:
            summary_writer.flush()
            summary_writer.close()

    tu.now, tu.print_training_update, tu.print_test_update = now, print_training_update, \
        print_test_update
    tu.get_summary_writer, tu.write_to_summary, tu.close_summary_writer = \
        get_summary_writer, write_to_summary, close_summary_writer

    amp = reg.module("torch_xla.amp")

    def autocast(device=None, enabled=True, dtype=None, cache_enabled=True):
        return torch.autocast("cpu", dtype=dtype or torch.bfloat16, enabled=enabled,
                              cache_enabled=cache_enabled)

    amp.autocast = autocast
    syncfree = reg.module("torch_xla.amp.syncfree")
    syncfree.SGD, syncfree.Adam, syncfree.AdamW = torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW
