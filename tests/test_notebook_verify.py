"""`hpulint verify NB.ipynb`: the code cells run in order on the simulated device; the counts in
each notebook's header, its findings confirmed, and every line reported as cell and line."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from hpulint.lazy.replay import replay  # noqa: E402
from notebook_fixtures import NOTEBOOKS, all_notebooks  # noqa: E402

FIXTURES = all_notebooks()
CASES = [(fx, p) for fx in FIXTURES for p in fx.replay]
FIXED = [(fx, p) for fx in FIXTURES for p in fx.fixed_replay]


@pytest.mark.parametrize("fx,profile", CASES, ids=[f"{fx.id}-{p}" for fx, p in CASES])
def test_notebook_replay_counts_match_the_header(fx, profile):
    result = replay(str(fx.path), profile=profile)
    assert result["status"] == "ok", result["error"]
    assert {k: result[k] for k in fx.replay[profile]} == fx.replay[profile]


@pytest.mark.parametrize("fx,profile", FIXED, ids=[f"{fx.id}-{p}" for fx, p in FIXED])
def test_fixed_notebook_replays_with_fewer_compilations_or_syncs(fx, profile, tmp_path):
    fixed = tmp_path / fx.path.name
    shutil.copy(fx.fixed, fixed)
    result = replay(str(fixed), profile=profile)
    assert result["status"] == "ok", result["error"]
    assert {k: result[k] for k in fx.fixed_replay[profile]} == fx.fixed_replay[profile]
    before = fx.replay[profile]
    assert result["compiles"] < before["compiles"] or result["syncs"] < before["syncs"] or \
        result["mark_steps"] > before["mark_steps"]


def verify(*args):
    return subprocess.run([sys.executable, "-m", "hpulint", "verify", *args], capture_output=True,
                          text=True, timeout=300, cwd=NOTEBOOKS.parent.parent)


def test_verify_command_reports_cells_and_lines():
    proc = verify("fixtures/notebooks/loop_constants.ipynb")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "9 x at mark_step at cell 4, line 12: constant changed: select.int at cell 4, line 4: 4 -> 5" in out
    assert "  HPU001 cell 4, line 4: confirmed: 9 recompilations caused by a constant that changed at this line" in out
    assert "  HPU001 cell 4, line 5: confirmed:" in out
    assert "    1 x host sync (cpu()) at cell 5, line 1" in out


def test_verify_json_carries_cells(tmp_path):
    proc = verify("--format", "json", "fixtures/notebooks/host_syncs.ipynb")
    data = json.loads(proc.stdout)
    assert [(f["code"], f["cell"], f["line"], f["status"]) for f in data["findings"]] == [
        ("HPU002", 3, 10, "confirmed"), ("HPU005", 4, 14, "confirmed")]


def test_a_failing_cell_is_reported_at_its_cell(tmp_path):
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["import torch\n", "%matplotlib inline\n"]},
                    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["x = torch.ones(2)\n", "y = undefined_name + x\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "fails.ipynb"
    path.write_text(json.dumps(nb))
    proc = verify(str(path))
    assert proc.returncode == 1
    assert "failed at cell 2, line 2: NameError: name 'undefined_name' is not defined" in proc.stdout
