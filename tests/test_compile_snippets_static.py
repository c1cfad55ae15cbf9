"""The static compile rules on the held-out snippets (tests/data/compile_snippets, not used to
tune them), against what real Dynamo did (truth.json): every look-alike stays clean, and at least
90% of the lines where Dynamo breaks the graph get a compile-rule finding.

On the sets the rules were changed for (c01-c115, see the README there), graph breaks and
recompiling functions together: at least 90% found, so no change loses what was fixed. The newest
set (c116-c135) is still held out: its misses are measured by benchmarks/compile_snippets.py (which
prints each set's figures, 15.4% at its one measurement) and not asserted here; its look-alikes
are, with every other set's."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = importlib.util.spec_from_file_location("compile_snippets", ROOT / "benchmarks" / "compile_snippets.py")
bench = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bench)

TRUTH = json.loads((bench.SNIPPETS / "truth.json").read_text())
ROWS = bench.measure(TRUTH)["rows"]
HELD_OUT_FROM = 116  # the sixth set: linted once, its misses not worked on
WORKED = [r for r in ROWS if bench.snippet_number(r["file"]) < HELD_OUT_FROM]


# Findings of the lazy-mode rules on look-alikes that were measured right on the lazy device
# (truth.json measures Dynamo only): c305's beam-search history grown with torch.cat and a
# mark_step every pass, on PyTorch/XLA 2.9 (PJRT CPU): 12 XLA compilations over 8 steps, 5 with the
# history preallocated and written in place, 2 without the loop. c503's `err.item()` each epoch after
# `torch_xla.sync()` (HPU005): on the same PyTorch/XLA, 12 transfers from the device over 4 epochs,
# 8 with the read removed, compilations 4 either way (tests/data/logs/pytorch-xla/snippet_read.log):
# a host read every pass, as reported.
LAZY_MEASURED = {"c305_tensor_beam_step_openxla.py": [("HPU003", 46)],
                 "c503_linear_probe_ridge_solve.py": [("HPU005", 33)]}


def test_no_look_alike_gets_a_finding():
    flagged = {r["file"]: r["findings"] for r in ROWS if r["safe"] and r["findings"]}
    assert sum(r["safe"] for r in ROWS) >= 10
    assert flagged == LAZY_MEASURED
    assert all(code not in bench.COMPILE_RULES for found in flagged.values() for code, _ in found)


def test_graph_break_lines_get_a_compile_finding():
    s = bench.summary(WORKED)
    assert s["break_lines"] >= 15
    assert s["break_lines_found"] >= 0.9 * s["break_lines"], [
        (r["file"], ln) for r in WORKED for ln, hit in r["breaks"].items() if not hit]


def test_lines_where_dynamo_breaks_or_recompiles_get_a_finding():
    s = bench.summary(WORKED)
    assert s["recompiling_functions"] >= 10
    assert s["recall"] >= 0.9, [r["file"] for r in WORKED if r["recompiling"] is False]
