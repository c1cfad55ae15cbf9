"""hpulint's dynamic half: a simulated lazy device that counts compilations and host syncs.

This package is the only part of hpulint that imports torch, and only when something in it is
used: importing ``hpulint.lazy`` (or ``hpulint.lazy.cli``) stays cheap and works without torch.

* ``hpulint.lazy.device(profile)``: a context manager for users' own tests (see ``api``).
* ``hpulint verify SCRIPT``: replays a script in a child process (``replay``), reports the
  counts and causes (``report``) and confirms the linter's findings (``confirm``).
"""
from __future__ import annotations

__all__ = ["device", "LazyDevice"]


def device(profile="hpu", *, engine="sim", max_steps=None, backend="eager", scalars=None):
    """Run the code in a ``with`` block on the simulated lazy device and count what it does.

    ``profile`` is ``"hpu"`` (Gaudi lazy mode) or ``"xla"`` (PyTorch/XLA). (PyTorch's real Lazy
    Tensor Core is available from the command line: ``hpulint verify --engine ltc``.)
    ``"compile"`` runs real Dynamo (torch.compile with the ``backend`` given, ``eager`` by
    default) and counts graphs, graph breaks, recompilations and eager fallbacks.
    """
    from .api import device as _device

    return _device(profile, engine=engine, max_steps=max_steps, backend=backend,
                   scalars=scalars)


def __getattr__(name):
    if name == "LazyDevice":
        from .api import LazyDevice

        return LazyDevice
    raise AttributeError(name)
