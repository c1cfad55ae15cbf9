"""The xla profile against real PyTorch/XLA 2.9, row by row.

tests/data/calibration/xla.csv was measured by ``benchmarks/calibrate_xla.py xla`` on torch 2.9.0
and torch_xla 2.9.0 (PJRT_DEVICE=CPU, tests/data/calibration/versions.json): every fixture with a
``replay xla`` header, every script in tests/data/calibration/scripts/, and the realistic scripts
in tests/data/realistic/. Each row is replayed here on the simulated device (profile xla) and its
compilations (``UncachedCompile``) and host transfers (samples of ``TransferFromDeviceTime``)
must equal the table, except on the rows of ``EXPECTED_DIFFERENCES``, where the simulated counts
must be exactly the ones given there, for the reason given there.
"""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

pytest.importorskip("torch")

from hpulint.lazy.replay import replay  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests" / "data" / "calibration" / "xla.csv"


def _table():
    with open(TABLE, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


ROWS = _table()
OK = [r for r in ROWS if r["status"] == "ok"]

# (script, args) -> (simulated compiles, simulated transfers, why they differ from PyTorch/XLA)
EXPECTED_DIFFERENCES = {
    ("fixtures/HPU010/bad_sdp_kernel_in_compiled_forward.py", ""): (
        2, 0, "torch.compile: on PyTorch/XLA the calibration maps Gaudi's hpu_backend to the "
              "openxla dynamo backend, which compiles its own graphs; the lazy profiles do not "
              "simulate torch.compile (the code runs uncompiled, in lazy mode; docs/verify.md, "
              "Limits), --profile compile measures it on real Dynamo"),
    ("fixtures/HPU010/good_recompute_mode_argument.py", ""): (
        2, 0, "torch.compile, as for bad_sdp_kernel_in_compiled_forward.py"),
    ("tests/data/calibration/scripts/spmd_single_device.py", "--eager"): (
        39, 3, "eager mode compiles one graph per op as PyTorch/XLA 2.9 lowers it, and the replay "
               "sees torch 2.13's CPU ops: an embedding is one op here and three graphs there, "
               "a Linear on a 3-d input is view, addmm, view here and view_copy, mm, "
               "_unsafe_view, add, view_copy there (39 vs 51 graphs; the lazy-mode row of the "
               "same script is equal)"),
}

# Rows that do not run to the end on real PyTorch/XLA, and why they are not compared
NOT_COMPARED = {
}


def _id(row):
    return row["script"].replace("tests/data/", "") + (f" {row['args']}" if row["args"] else "")


def test_the_table_covers_every_fixture_and_script_and_says_where_it_came_from():
    import json
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import calibrate_xla
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    wanted = {(s, " ".join(a)) for s, a in calibrate_xla.rows()}
    have = {(r["script"], r["args"]) for r in ROWS}
    assert wanted == have
    scripts = [s for s, _ in wanted if s.startswith("tests/data/calibration/scripts/")]
    assert len(scripts) >= 30
    versions = json.loads((TABLE.parent / "versions.json").read_text())
    assert versions["xla"]["torch_xla"].startswith("2.9") and versions["xla"]["PJRT_DEVICE"] == "CPU"
    failed = {(r["script"], r["args"]) for r in ROWS if r["status"] != "ok"}
    assert failed == set(NOT_COMPARED)


def test_at_least_95_percent_of_rows_are_equal():
    # each row's own test below holds it either equal or to its documented difference
    assert set(EXPECTED_DIFFERENCES) <= {(r["script"], r["args"]) for r in OK}
    equal = len(OK) - len(EXPECTED_DIFFERENCES)
    assert equal / len(OK) >= 0.95, f"{equal}/{len(OK)}"


@pytest.mark.parametrize("row", OK, ids=[_id(r) for r in OK])
def test_xla_profile_equals_pytorch_xla(row):
    args = row["args"].split()
    sim = replay(str(ROOT / row["script"]), args, profile="xla")
    assert sim["status"] == "ok", sim.get("error")
    got = (sim["compiles"], sim["syncs"])
    real = (int(row["compiles"]), int(row["transfers"]))
    key = (row["script"], row["args"])
    if key in EXPECTED_DIFFERENCES:
        compiles, transfers, why = EXPECTED_DIFFERENCES[key]
        assert got == (compiles, transfers), why
        assert got != real, "now equal: take the row out of EXPECTED_DIFFERENCES"
    else:
        assert got == real
