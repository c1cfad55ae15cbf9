"""README.md stays true: its rule table matches the rules, and CI runs its test command."""
from __future__ import annotations

import re
from pathlib import Path

from hpulint.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_rule_table_matches_the_rules():
    rows = re.findall(r"^\| \[(HPU\d{3})\]\(rules/(HPU\d{3})\.md\) \| ([\w-]+) \| (.+?) \| (.+?) \|$", README, re.M)
    assert [r[0] for r in rows] == [r.code for r in ALL_RULES]
    for (code, page, name, finds, fix), rule in zip(rows, ALL_RULES):
        assert page == code and (ROOT / "rules" / f"{code}.md").is_file()
        assert name == rule.name
        assert finds.replace("`", "") == rule.summary
        assert fix == (rule.fix_safety or "none")


def test_ci_runs_the_readme_test_command():
    commands = re.findall(r"```sh\n(.+?)\n```", README)
    test_cmd = next(c for c in commands if "pytest" in c).split("&&")[-1].strip()
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.strip().startswith("#")]
    assert ci[-1] == test_cmd
    assert "torch==2.13.0" in (ROOT / ".ci" / "run").read_text()


def test_one_project_url_for_the_pre_commit_snippet_and_sarif():
    import json

    from hpulint.project import PROJECT_URL
    from hpulint.report import sarif

    assert re.search(r"^- repo: (\S+)$", README, re.M).group(1) == PROJECT_URL
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert re.search(r"^#\s+- repo: (\S+)$", hooks, re.M).group(1) == PROJECT_URL
    doc = json.loads(json.dumps(sarif([])))
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == PROJECT_URL
    assert all(r["helpUri"] == f"{PROJECT_URL}/blob/main/rules/{r['id']}.md" for r in driver["rules"])
    # set in one place: no other module spells it out
    spelled = [p.relative_to(ROOT).as_posix() for p in (ROOT / "hpulint").rglob("*.py")
               if "github.com/hpulint" in p.read_text(encoding="utf-8")]
    assert spelled == ["hpulint/project.py"]


def _sample(command: str) -> str:
    """The output README.md shows under ``$ COMMAND`` in a code block."""
    m = re.search(r"^```\n\$ " + re.escape(command) + r"\n(.*?)^```$", README, re.M | re.S)
    assert m, f"no sample of `{command}` in README.md"
    return m.group(1)


def test_the_lint_sample_is_what_the_command_prints(capsys, monkeypatch):
    from hpulint.cli import main

    monkeypatch.chdir(ROOT)
    assert main(["--no-cache", "fixtures/"]) == 1
    assert capsys.readouterr().out == _sample("hpulint fixtures/")


def test_the_explain_sample_is_what_the_command_prints(capsys, monkeypatch):
    from hpulint.cli import main

    monkeypatch.chdir(ROOT)
    assert main(["explain", "tests/data/logs/dynamo/recompile_limit.log"]) == 1
    assert capsys.readouterr().out == _sample("hpulint explain tests/data/logs/dynamo/recompile_limit.log")


def test_the_verify_sample_is_what_the_command_prints():
    import subprocess
    import sys

    import pytest

    pytest.importorskip("torch")
    proc = subprocess.run([sys.executable, "-m", "hpulint", "verify", "fixtures/HPU001/bad_vdiffusion.py"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    seconds = re.compile(r"\(\d+\.\d\d s\)")
    shown = _sample("hpulint verify fixtures/HPU001/bad_vdiffusion.py")
    assert seconds.sub("(T s)", proc.stdout) == seconds.sub("(T s)", shown)


def test_every_subpackage_ships_in_the_wheel():
    """A wheel install (pre-commit's, pip's) gets every package: the list in pyproject.toml is
    hand-written, so a new subpackage must be added there."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {p.parent.relative_to(ROOT).as_posix().replace("/", ".")
             for p in (ROOT / "hpulint").rglob("__init__.py")}
    assert found <= listed, f"not in pyproject.toml: {sorted(found - listed)}"
