"""`hpulint verify` end to end with the real linter. On every fixture, each finding the linter
reports is confirmed by a replay on both profiles (in-process: the same lint, replay and
confirmation the command runs); the command itself, in its child process, on one bad fixture
per rule."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from fixture_format import lazy_fixtures  # noqa: E402
from hpulint import lint_source  # noqa: E402
from hpulint.cli import main  # noqa: E402
from hpulint.lazy.confirm import confirm  # noqa: E402
from hpulint.lazy.replay import replay  # noqa: E402

# codes whose mechanism the simulated device does not model (HPU Graphs, torch.compile)
NOT_CHECKED = {"HPU009", "HPU010"}
FIXTURES = lazy_fixtures()  # compile fixtures: test_compile_fixtures.py


@pytest.mark.parametrize("profile", ["hpu", "xla"])
@pytest.mark.parametrize("fx", FIXTURES, ids=[fx.id for fx in FIXTURES])
def test_every_finding_of_the_linter_is_confirmed(fx, profile, capsys):
    source = fx.path.read_text()
    findings = lint_source(source, path=str(fx.path))
    assert sorted((f.code, f.line) for f in findings) == sorted(fx.expect)
    result = replay(str(fx.path), profile=profile)
    capsys.readouterr()
    assert result["status"] == "ok", result["error"]
    statuses = {(c["code"], c["line"]): c["status"] for c in confirm(findings, result, source)}
    want = {(code, line): "not checked" if code in NOT_CHECKED else "confirmed" for code, line in fx.expect}
    assert statuses == want


ONE_BAD_PER_RULE = sorted({fx.path.parent.name: fx for fx in FIXTURES
                           if fx.path.name.startswith("bad_") and fx.path.parent.name not in NOT_CHECKED}
                          .values(), key=lambda fx: fx.id)


@pytest.mark.parametrize("fx", ONE_BAD_PER_RULE, ids=[fx.id for fx in ONE_BAD_PER_RULE])
def test_the_command_confirms_in_its_child_process(fx, capsys):
    assert main(["verify", str(fx.path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted((f["code"], f["line"], f["status"]) for f in data["findings"]) == sorted(
        (code, line, "confirmed") for code, line in fx.expect)


def test_verify_text_report_names_cause_and_line(capsys):
    fx = next(f for f in FIXTURES if f.id == "HPU001/bad_vdiffusion.py")
    assert main(["verify", str(fx.path)]) == 0
    out = capsys.readouterr().out
    line = fx.expect[0][1]
    assert f"HPU001 line {line}: confirmed" in out
    assert f"constant changed: select.int at line {line}: 4 -> 5" in out
