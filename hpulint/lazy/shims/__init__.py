"""Stand-ins for the Gaudi and PyTorch/XLA Python packages, active only inside a replay.

A script written for a Gaudi (``import habana_frameworks.torch.core as htcore``) or a TPU
(``import torch_xla.core.xla_model as xm``) imports these modules instead of the real ones;
their step markers and metrics talk to the replay's backend (the simulated device, or
``torch._lazy`` with ``--engine ltc``). ``Shims`` puts them in ``sys.modules`` (and a finder
first on ``sys.meta_path`` that names any other ``torch_xla``/``habana_frameworks`` module as not
stood in), maps ``torch.hpu``, ``torch.autocast("hpu"/"xla")`` and ``torch.compile``, and takes
everything out again on exit, restoring whatever was there before.

What is stood in: ``habana`` and ``xla`` (module docstrings); how a missing name is reported:
``base``.
"""
from __future__ import annotations

import functools
import sys

import torch

from . import habana, xla
from .base import Finder, NotStoodIn, NotStoodInModule, Registry, explain_error  # noqa: F401


def build(backend, registry=None) -> dict:
    """The stand-in modules, bound to ``backend`` (a SimDevice or an LTC observer)."""
    reg = registry or Registry()
    habana.build(reg, backend)
    xla.build(reg, backend)
    return reg.modules


def _compile(model=None, **kwargs):
    """``torch.compile`` inside a replay: not simulated, the code runs as it is (lazy mode)."""
    if model is None:
        return lambda fn: fn
    return model


class Shims:
    """Install the stand-in modules (and ``torch.hpu``) for the duration of a ``with`` block."""

    def __init__(self, backend):
        self.backend = backend
        self.registry = Registry()
        self._saved = {}
        self._had_torch_hpu = False
        self._torch_hpu = None
        self._finder = None

    @property
    def missing(self) -> list:
        """Names the script asked for that the replay does not stand in for."""
        return list(self.registry.missing)

    def __enter__(self):
        mods = build(self.backend, self.registry)
        for name, mod in mods.items():
            self._saved[name] = sys.modules.get(name)
            sys.modules[name] = mod
        self._finder = Finder(self.registry)
        sys.meta_path.insert(0, self._finder)
        self._had_torch_hpu = hasattr(torch, "hpu")
        self._torch_hpu = getattr(torch, "hpu", None)
        torch.hpu = mods["habana_frameworks.torch.hpu"]
        # torch.autocast("hpu") / ("xla"): the replay computes on the CPU, so cast like the CPU
        self._autocast_init = torch.amp.autocast_mode.autocast.__init__
        plain = self._autocast_init

        @functools.wraps(plain)  # Dynamo binds autocast's arguments by the real signature
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
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)
        for name, old in self._saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
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
