"""`hpulint verify` end to end with the real linter: on every bad fixture, each finding the
linter reports is confirmed by the replay, on both profiles; good fixtures have nothing to confirm."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from fixture_format import all_fixtures  # noqa: E402
from hpulint.cli import main  # noqa: E402

# codes whose mechanism the simulated device does not model (HPU Graphs, torch.compile)
NOT_CHECKED = {"HPU009", "HPU010"}
FIXTURES = [fx for fx in all_fixtures() if fx.path.parent.name not in NOT_CHECKED]


@pytest.mark.parametrize("profile", ["hpu", "xla"])
@pytest.mark.parametrize("fx", FIXTURES, ids=[fx.id for fx in FIXTURES])
def test_every_finding_is_confirmed(fx, profile, capsys):
    code = main(["verify", str(fx.path), "--profile", profile, "--format", "json"])
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads(out)
    assert sorted((f["code"], f["line"]) for f in data["findings"]) == sorted(fx.expect)
    assert [f for f in data["findings"] if f["status"] != "confirmed"] == []
    assert data["profile"] == profile and data["compiles"] >= 1


def test_verify_text_report_names_cause_and_line(capsys):
    fx = next(f for f in FIXTURES if f.id == "HPU001/bad_vdiffusion.py")
    assert main(["verify", str(fx.path)]) == 0
    out = capsys.readouterr().out
    line = fx.expect[0][1]
    assert f"HPU001 line {line}: confirmed" in out
    assert f"constant changed: select.int at line {line}: 4 -> 5" in out
