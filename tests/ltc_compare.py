"""The simulated device next to PyTorch's Lazy Tensor Core (torch._lazy, TorchScript backend).

Shared by the fixtures' cross-check (test_lazy_fixtures.py, LTC run live) and the calibration
table's (test_calibration_ltc.py, LTC's counts and compile sites from
tests/data/calibration/ltc.csv and tests/data/heldout/ltc.csv).

Compilations are compared cut site by cut site (the line of a step marker or of a host read).
The check names the mechanism behind each difference (docs/verify.md, ``--engine ltc``):

* ``deferred_upload``: LTC compiles more graphs at a site than the simulation, at most once
  more per graph the simulation compiles there, plus one graph of uploads alone at a marker
  where the simulation has nothing to run (the xla profile does not defer uploads;
  ``LTC_SEMANTICS`` does, so there it flags the extra compilations it leaves unexplained);
* ``cpu_fallback``: ops the TorchScript backend has no lowering for run on the CPU after the
  graph their inputs need has run (sites named "... (CPU fallback)"); the simulation runs the
  data-dependent ones on the host ("... (runs on the host)") and compiles the others. An op run
  on the CPU on data already computed needs no graph where the simulation compiles one at the
  read that follows, and a step marker may have nothing left to run.
"""
from __future__ import annotations

import os
from dataclasses import replace

from hpulint.lazy.confirm import HOST_RUN
from hpulint.lazy.profiles import get_profile

# The xla profile with the switches for what LTC does differently, each measured on torch
# 2.13's torch._lazy (tests/test_lazy_device.py has the switches on their own):
# * every Python scalar is data, 0, 1 and -1 too (FLAGS_torch_lazy_handle_special_scalars is
#   off), typed by its Python type: x * 2 and x * 2.0 are two graphs (Long and Double data);
# * pow's exponent is data (x ** 2.0, 3.0, 4.0, 0.5: two graphs, the first and the one after x
#   became device data); arange's bounds shape its output and stay constants;
# * a host read computes the read tensor and keeps its IR: the next step marker computes
#   nothing, later graphs that use the tensor recompute it, and a read's graph is the same
#   graph as a step marker's (no force_ltc_data in the hash);
# * .to(device) keeps host data until the next step marker, which syncs the uploads an op used
#   as extra outputs of its graph (a graph of uploads alone if nothing else is pending) and
#   uploads the others without a graph; a module's parameters are IR until then.
LTC_SEMANTICS = replace(
    get_profile("xla"), special_scalars=frozenset(), reads_keep_graph=False, reads_keep_ir=True,
    deferred_uploads=True, typed_scalars=True,
    constant_scalar_ops=frozenset({"aten.arange", "aten.range"}),
    description="PyTorch/XLA's graphs with LTC's scalars, reads and uploads")

FALLBACK = "(CPU fallback)"
MARKERS = ("mark_step", "torch_xla.sync", "MpDeviceLoader", "optimizer_step(barrier=True)")


def host_runs(result) -> int:
    """The simulation's host runs of data-dependent ops (CPU fallbacks on LTC, not reads)."""
    return sum(e["count"] for e in result["events"]
               if e["kind"] == "sync" and HOST_RUN in e["what"])


def parse_sites(text: str) -> list:
    """The ``compile_sites`` column of an ltc table (``FILE:LINE@STEP[+] SITE; ...``) as
    compile events."""
    events = []
    for entry in filter(None, (p.strip() for p in text.split(";"))):
        where, site = entry.split(" ", 1)
        file_line, step = where.rsplit("@", 1)
        file, line = file_line.rsplit(":", 1)
        events.append({"kind": "compile", "file": file, "line": int(line), "site": site,
                       "step": int(step.rstrip("+")), "uploads_pending": step.endswith("+")})
    return events


def _at(events, where):
    return [e for e in events if _where(e) == where]


def _where(e):
    return (os.path.basename(e["file"] or "?"), e["line"])


def site_differences(ltc_events, sim_events) -> set:
    """The mechanisms that explain how LTC's compilations differ from the simulation's, site by
    site; an AssertionError names a difference that neither explains."""
    found = set()
    ltc_c = [e for e in ltc_events if e["kind"] == "compile"]
    sim_c = [e for e in sim_events if e["kind"] == "compile"]
    fallbacks = any(FALLBACK in e["site"] for e in ltc_c)
    if fallbacks or any(e["kind"] == "sync" and HOST_RUN in e["what"] for e in sim_events):
        found.add("cpu_fallback")
    ltc_c = [e for e in ltc_c if FALLBACK not in e["site"]]
    sim_c = [e for e in sim_c if HOST_RUN not in e["site"]]
    for where in sorted({_where(e) for e in ltc_c + sim_c}):
        at_ltc, at_sim = _at(ltc_c, where), _at(sim_c, where)
        extra = len(at_ltc) - len(at_sim)
        if extra > 0:
            # each graph compiled once more (its first run synced uploads), or a graph of
            # uploads alone at a marker where the simulation had nothing to run
            first = at_ltc[0]
            upload_only = bool(first["uploads_pending"]) and (
                not at_sim or first["step"] < at_sim[0]["step"])
            assert extra <= len(at_sim) + upload_only, (where, len(at_ltc), len(at_sim))
            found.add("deferred_upload")
        elif extra < 0:
            # an op LTC ran on the CPU on data already computed: no graph at this read; or
            # what a step marker would have run, LTC ran at the CPU fallbacks before it
            assert fallbacks or all(e["site"] not in MARKERS for e in at_sim), \
                (where, len(at_ltc), len(at_sim))
            found.add("cpu_fallback")
    return found
