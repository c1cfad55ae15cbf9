"""The Python API: run code on the simulated device and read the counts in a test.

::

    import hpulint.lazy

    def test_training_step_compiles_once():
        with hpulint.lazy.device("xla") as d:
            model = Net().to(d.device)
            for step in range(5):
                train_step(model, batch(step))
                d.mark_step()
        assert d.compiles == 1
        assert d.syncs == 0

Inside the ``with`` block the Gaudi and PyTorch/XLA shims are importable
(``import torch_xla.core.xla_model as xm`` works), ``"hpu"``/``"xla"`` devices map to the
simulated device, and every counter the report shows is available as an attribute.
"""
from __future__ import annotations

from .profiles import get_profile


class LazyDevice:
    """Context manager returned by ``hpulint.lazy.device(profile)``."""

    def __init__(self, profile="hpu", engine="sim", max_steps=None, scalars=None):
        self._profile = get_profile(profile, scalars)
        if engine != "sim":
            # torch._lazy keeps its compilation cache for the life of the process, so counts
            # taken inside a test process depend on what ran before: use the CLI, which
            # replays in a fresh process (hpulint verify --engine ltc).
            raise ValueError("the Python API runs on the simulated device only (engine='sim'); "
                             "use `hpulint verify --engine ltc SCRIPT` for torch._lazy")
        self.engine = engine
        self.max_steps = max_steps
        self._backend = None
        self._shims = None

    # -- context ---------------------------------------------------------------------------------

    def __enter__(self):
        from .shims import Shims

        from .sim import SimDevice

        self._backend = SimDevice(self._profile, self.max_steps)
        self._shims = Shims(self._backend)
        self._shims.__enter__()
        try:
            self._backend.__enter__()
        except BaseException:
            self._shims.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        try:
            self._backend.__exit__(*exc)
        finally:
            self._shims.__exit__(*exc)
        return False

    # -- what a test reads -------------------------------------------------------------------------

    @property
    def profile(self) -> str:
        return self._profile.name

    @property
    def device(self):
        """The ``torch.device`` scripts use for this profile (``hpu:0`` or ``xla:0``)."""
        return self._backend.torch_device(0)

    def mark_step(self):
        """A step marker, like ``htcore.mark_step()`` or ``xm.mark_step()``."""
        from .sim import user_frame

        self._backend.mark_step("mark_step", user_frame())

    compiles = property(lambda self: self._backend.compiles,
                        doc="graph compilations (cache misses)")
    cached = property(lambda self: self._backend.cached,
                      doc="graph executions that reused a compiled graph")
    syncs = property(lambda self: self._backend.syncs,
                     doc="host reads of device tensors (item, print, cpu, ...)")
    mark_steps = property(lambda self: self._backend.mark_steps, doc="step markers")
    max_graph_nodes = property(lambda self: self._backend.max_graph_nodes,
                               doc="size of the largest compiled graph, in ops")

    @property
    def events(self) -> list:
        """Compile events (with cause), growth events and per-line sync counts."""
        return self._backend.all_events()

    @property
    def recompiles(self) -> list:
        return [e for e in self._backend.events if e["kind"] == "compile" and e["recompile"]]

    def summary(self) -> dict:
        return self._backend.summary()


def device(profile="hpu", *, engine="sim", max_steps=None, backend="eager", scalars=None):
    """Run the code in a ``with`` block on the simulated lazy device and count what it does.

    ``scalars="constant"`` makes every Python scalar operand a graph constant (the worst case);
    by default only 0, 1 and -1 are, as on PyTorch/XLA.

    ``profile="compile"`` runs real Dynamo instead (``dynamo.CompileDevice``: ``compiles``,
    ``graph_breaks``, ``recompiles``, ``fallbacks``, ``events``); ``backend`` applies to it only.
    """
    if profile == "compile":
        from .dynamo import CompileDevice

        return CompileDevice(backend, max_steps)
    return LazyDevice(profile, engine=engine, max_steps=max_steps, scalars=scalars)
