"""The held-out compile snippets (tests/data/compile_snippets): `verify --profile compile`
counts what Dynamo itself reports with TORCH_LOGS (truth.json, measured without hpulint by
measure.py), snippet by snippet. The static rules are not tuned on these snippets."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from hpulint.lazy.replay import replay  # noqa: E402
from hpulint.lazy.dynamo_logs import first_sourced  # noqa: E402

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent / "data" / "compile_snippets"
TRUTH = json.loads((HERE / "truth.json").read_text())
ROWS = TRUTH["snippets"]


def test_truth_covers_every_snippet():
    assert sorted(r["file"] for r in ROWS) == sorted(p.name for p in HERE.glob("c[0-9]*.py"))
    assert len(ROWS) >= 40
    assert sum(r["safe"] for r in ROWS) >= 10


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_verify_counts_what_dynamo_reports(row, capsys):
    script = HERE / row["file"]
    result = replay(str(script), profile="compile")
    capsys.readouterr()
    assert result["status"] == "ok", result["error"]
    keys = ("compiles", "graph_breaks", "recompiles", "fallbacks")
    assert {k: result[k] for k in keys} == {k: row[k] for k in keys}
    here = str(HERE / row["file"])
    breaks = sorted({e["line"] for e in result["events"]
                     if e["kind"] == "graph_break" and e["file"] == here})
    assert breaks == row["break_lines"]
    guards = sorted({first_sourced(e["guard_failures"])["line"] for e in result["events"]
                     if e["kind"] == "recompile" and e["guard_failures"]
                     and first_sourced(e["guard_failures"]).get("file") == here})
    assert guards == row["recompile_lines"]
