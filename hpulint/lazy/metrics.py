"""The counters a replay's backend exposes to the metric stand-ins (PyTorch/XLA, Gaudi)."""
from __future__ import annotations


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

