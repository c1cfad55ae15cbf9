"""Stand-ins for Intel Gaudi's ``habana_frameworks.torch``, for a replay on one device.

The list comes from the Gaudi documentation and from what Habana's Model-References and
optimum-habana scripts import:

* ``core``: ``mark_step`` (a step marker), ``is_initialized``.
* ``hpu``: device queries (one device), ``synchronize``, ``Stream``/``Event`` (no-ops: the replay
  runs in order), memory statistics (zeros), the RNG helpers (torch's), ``metrics``
  (``metric_global("graph_compilation")`` reads the replay's compilations), and the HPU Graph
  wrappers ``wrap_in_hpu_graph``, ``ModuleCacher``, ``make_graphed_callables`` (inert: the module
  runs in lazy mode as it is; capture and replay are not simulated, ``HPUGraph`` has no
  stand-in), ``sdp_kernel`` (a context manager that does nothing). ``hpu.graphs`` holds the same.
* ``hpex``: the fused optimizers mapped to torch's (``FusedAdamW`` -> ``torch.optim.AdamW`` with
  the step count on the device, ``capturable=True``, as the fused kernel keeps it;
  ``FusedSGD`` -> ``SGD``; ``FusedAdagrad`` -> ``Adagrad``), and the kernels written out in plain
  ops (``FusedSDPA``, ``FusedRMSNorm``, ``RotaryPosEmbeddingHelperV1/V2``, ``FusedClipNorm``).
* ``utils.library_loader.load_habana_module`` (nothing to load), ``utils.debug`` (the module),
  ``utils.experimental._get_device_type``, ``distributed.hccl`` (one process).

Everything else under ``habana_frameworks`` is named as not stood in.
"""
from __future__ import annotations

import contextlib
import copy
import types

import torch

from ..frames import user_frame


def build(reg, backend) -> None:
    def mark_step(device_str="", sync=False):
        backend.mark_step("mark_step", user_frame())

    core = reg.module("habana_frameworks.torch.core")
    hpu = reg.module("habana_frameworks.torch.hpu")
    core.mark_step = mark_step
    core.is_initialized = lambda: True
    core.hpu = hpu
    _hpu(reg, hpu, backend)
    # torch._lazy's device ("lazy") is not one capturable optimizers accept
    _hpex(reg, capturable=getattr(backend, "engine", "sim") == "sim")
    utils = reg.module("habana_frameworks.torch.utils")
    reg.module("habana_frameworks.torch.utils.library_loader").load_habana_module = lambda: None
    reg.module("habana_frameworks.torch.utils.debug")._bridge_cleanup = lambda: None
    exp = reg.module("habana_frameworks.torch.utils.experimental")
    exp.synDeviceType = types.SimpleNamespace(synDeviceGaudi=1, synDeviceGaudi2=2,
                                              synDeviceGaudi3=3)
    exp._get_device_type = lambda: exp.synDeviceType.synDeviceGaudi2
    utils.experimental = exp
    hccl = reg.module("habana_frameworks.torch.distributed.hccl")
    hccl.initialize_distributed_hpu = lambda world_size=-1, rank=-1, local_rank=-1: (1, 0, 0)


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


class _Stream:
    """``torch.hpu.Stream``/``Event``: the replay runs everything in order, so they wait for nothing."""

    def __init__(self, *args, **kwargs):
        pass

    def synchronize(self):
        pass

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        return event or _Stream()

    def record(self, stream=None):
        pass

    def query(self):
        return True

    def elapsed_time(self, end):
        return 0.0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _hpu(reg, hpu, backend):
    # (the compile profile runs on the CPU: a script that picks `torch.device("hpu")` when it is
    # available must take its CPU path there)
    hpu.is_available = lambda: getattr(backend, "hpu_available", True)
    hpu.device_count = lambda: 1
    hpu.current_device = lambda: 0
    hpu.set_device = lambda *a, **k: None
    hpu.synchronize = lambda *a, **k: None
    hpu.get_device_name = lambda *a, **k: "GAUDI (hpulint simulated device)"
    hpu.is_initialized = lambda: True
    hpu.init = lambda: None
    hpu.Stream = hpu.Event = _Stream
    hpu.stream = lambda stream=None: contextlib.nullcontext(stream)
    hpu.current_stream = hpu.default_stream = lambda device=None: _Stream()
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved"):
        setattr(hpu, name, lambda device=None: 0)
    hpu.memory_stats = lambda device=None: {}
    hpu.memory_summary = lambda device=None, abbreviated=False: "hpulint simulated device: " \
        "no memory statistics\n"
    hpu.mem_get_info = lambda device=None: (0, 0)
    hpu.reset_peak_memory_stats = hpu.reset_max_memory_allocated = lambda device=None: None
    hpu.empty_cache = lambda: None
    hpu.manual_seed = hpu.manual_seed_all = lambda seed: torch.manual_seed(seed)
    hpu.seed = lambda: torch.seed()
    hpu.initial_seed = torch.initial_seed
    hpu.get_rng_state = lambda device="hpu": torch.get_rng_state()
    hpu.set_rng_state = lambda state, device="hpu": torch.set_rng_state(state)

    metrics = reg.module("habana_frameworks.torch.hpu.metrics")
    metrics.metric_global = lambda name: _Stat(backend, name)
    metrics.metric_localcontext = lambda name: _LocalStat(backend, name)

    graphs = reg.module("habana_frameworks.torch.hpu.graphs")
    for m in (hpu, graphs):
        m.make_graphed_callables = _make_graphed_callables
        m.ModuleCacher = _ModuleCacher
        m.wrap_in_hpu_graph = _wrap_in_hpu_graph
        m.wrap_in_hpu_graph_func = _wrap_in_hpu_graph
        m.HPUGraph = reg.unsupported(f"{m.__name__}.HPUGraph", "HPU Graph capture is not simulated")
        m.graph = reg.unsupported(f"{m.__name__}.graph", "HPU Graph capture is not simulated")
    hpu.sdp_kernel = _sdp_kernel


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


# -- hpex ----------------------------------------------------------------------------------------


def _hpex(reg, capturable=True):
    kernels = reg.module("habana_frameworks.torch.hpex.kernels")
    kernels.FusedSDPA = _FusedSDPA
    kernels.RotaryPosEmbeddingHelperV1 = kernels.RotaryPosEmbeddingHelperV2 = _FusedRoPE
    norm = reg.module("habana_frameworks.torch.hpex.normalization")
    norm.FusedRMSNorm = _FusedRMSNorm
    norm.FusedClipNorm = _FusedClipNorm
    opt = reg.module("habana_frameworks.torch.hpex.optimizers")
    opt.FusedAdamW = FusedAdamW if capturable else _FusedAdamWStepOnHost
    opt.FusedSGD = FusedSGD
    opt.FusedAdagrad = FusedAdagrad
    for name in ("FusedLamb", "FusedLars", "FusedEMA", "FusedResourceApplyMomentum"):
        setattr(opt, name, reg.unsupported(f"habana_frameworks.torch.hpex.optimizers.{name}",
                                           "no torch optimizer does the same"))


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


class _FusedRMSNorm:
    """``FusedRMSNorm.apply(x, weight, eps, ...)``: RMS normalisation in plain ops."""

    @staticmethod
    def apply(x, weight, eps=1e-6, *args, **kwargs):
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return weight * (x.float() * torch.rsqrt(variance + eps)).to(x.dtype)


class _FusedRoPE:
    """``RotaryPosEmbeddingHelperV2.apply(x, cos, sin, position_ids_or_offset)``: the rotation
    ``x * cos + rotate_half(x) * sin`` in plain ops (``cos``/``sin`` already gathered for the
    positions, as the Gaudi models pass them)."""

    @staticmethod
    def apply(x, cos, sin, position_ids=None, *args, **kwargs):
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rotated * sin


class _FusedClipNorm:
    """``FusedClipNorm(parameters, max_norm).clip_norm(parameters)``: ``clip_grad_norm_``."""

    def __init__(self, parameters=None, max_norm=1.0, norm_type=2.0):
        if not isinstance(parameters, (list, tuple)) and not hasattr(parameters, "__iter__"):
            parameters, max_norm = None, parameters  # FusedClipNorm(max_norm)
        self.parameters = list(parameters) if parameters is not None else []
        self.max_norm = max_norm
        self.norm_type = norm_type

    def clip_norm(self, parameters=None, norm_type=None):
        params = list(parameters) if parameters is not None else self.parameters
        return torch.nn.utils.clip_grad_norm_(params, self.max_norm,
                                              norm_type=norm_type or self.norm_type)


class FusedAdamW(torch.optim.AdamW):
    """Gaudi's ``FusedAdamW``: AdamW with the step count kept on the device (``capturable``)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0,
                 amsgrad=False, *args, **kwargs):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, capturable=True)


class _FusedAdamWStepOnHost(torch.optim.AdamW):
    """``FusedAdamW`` on ``--engine ltc``: plain AdamW (the lazy device is not capturable)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0,
                 amsgrad=False, *args, **kwargs):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad)


class FusedSGD(torch.optim.SGD):
    """Gaudi's ``FusedSGD``: ``torch.optim.SGD``."""

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *args, **kwargs):
        super().__init__(params, lr=lr, momentum=momentum, dampening=dampening,
                         weight_decay=weight_decay, nesterov=nesterov)


class FusedAdagrad(torch.optim.Adagrad):
    """Gaudi's ``FusedAdagrad``: ``torch.optim.Adagrad``."""

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0, eps=1e-10, *args,
                 **kwargs):
        super().__init__(params, lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps)
