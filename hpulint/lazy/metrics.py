"""The counters a replay's backend exposes to the metric stand-ins (PyTorch/XLA, Gaudi).

``MetricsMixin`` reads a backend's counts (``compiles``, ``cached``, ``syncs``, ``mark_steps``
and, where the backend keeps them, ``uploads``, ``graph_sizes`` and ``fallbacks``) under the names
PyTorch/XLA uses; ``format_report`` prints them in the text format of
``torch_xla.debug.metrics.metrics_report()``. The simulated device measures no time: durations
print as zero, the counts are the replay's.
"""
from __future__ import annotations

import time

# metrics whose samples are durations (printed as times) or sizes (printed as numbers)
_TIMED = ("CompileTime", "ExecuteTime", "TransferToDeviceTime", "TransferFromDeviceTime")
_PERCENTILES = (1, 5, 10, 20, 50, 80, 90, 95, 99)


class MetricsMixin:
    """What the metric shims (torch_xla.debug.metrics, Gaudi's metric_global) read from a device."""

    def metric_count(self, name):
        if name == "CompileTime":
            return self.compiles
        if name == "ExecuteTime":
            return self.compiles + self.cached
        if name in ("TransferFromDeviceTime", "TransferFromServerTime"):
            return self.syncs
        if name == "TransferToDeviceTime":
            return getattr(self, "uploads", 0)
        return 0

    def counter(self, name):
        return self.xla_counters().get(name, 0)

    def xla_metrics(self) -> dict:
        """name -> (total samples, accumulator, [(time, value), ...]) for the active metrics."""
        out = {}
        for name in _TIMED:
            n = self.metric_count(name)
            if n:
                out[name] = (n, 0.0, [(0.0, 0.0)] * min(n, 1024))
        sizes = getattr(self, "graph_sizes", None)
        if sizes:
            out["TensorsGraphSize"] = (len(sizes), float(sum(sizes)),
                                       [(0.0, float(s)) for s in sizes[-1024:]])
        return out

    def xla_counters(self) -> dict:
        out = {"MarkStep": self.mark_steps, "UncachedCompile": self.compiles,
               "CachedCompile": self.cached}
        for op, n in sorted((getattr(self, "fallbacks", None) or {}).items()):
            out[f"aten::{op}"] = n
        return {k: v for k, v in out.items() if v}


def _time(us: float) -> str:
    return "000.000us" if not us else f"{us:07.3f}us"


def _number(v: float) -> str:
    return f"{v:.2f}"


def format_report(backend, baseline=None, counters=None, metrics=None) -> str:
    """``metrics_report()`` text: ``Metric:`` blocks, then ``Counter:`` blocks.

    ``baseline`` holds the values at the last ``clear_*()``; ``counters``/``metrics`` restrict
    the report to those names (``short_metrics_report``).
    """
    baseline = baseline or {}
    started = getattr(backend, "started", None)
    elapsed = max(time.perf_counter() - started, 1e-9) if started is not None else 1.0
    lines = []
    for name, (total, acc, samples) in backend.xla_metrics().items():
        if metrics is not None and name not in metrics:
            continue
        total -= baseline.get(name, 0)
        if total <= 0:
            continue
        timed = name in _TIMED
        fmt = _time if timed else _number
        values = sorted(v for _, v in samples[-total:])
        pct = "; ".join(f"{p}%={fmt(values[min(len(values) - 1, len(values) * p // 100)])}"
                        for p in _PERCENTILES)
        rate = "000.000us / second" if timed else f"{acc / elapsed:.2f} / second"
        lines += [f"Metric: {name}", f"  TotalSamples: {total}", f"  Accumulator: {fmt(acc)}",
                  f"  ValueRate: {rate}", f"  Rate: {total / elapsed:.6g} / second",
                  f"  Percentiles: {pct}"]
    for name, value in backend.xla_counters().items():
        if counters is not None and name not in counters:
            continue
        value -= baseline.get(name, 0)
        if value > 0:
            lines += [f"Counter: {name}", f"  Value: {value}"]
    return "\n".join(lines) + "\n" if lines else ""
