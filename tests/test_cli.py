"""The command line as a user meets it: paths, options, config, suppressions, errors, exit codes."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hpulint.cli import main
from snippets import HAZARD

CLEAN = "import torch\n\nx = torch.zeros(3)\n"


def run(args, cwd: Path, capsys, monkeypatch, stdin: str | None = None):
    monkeypatch.chdir(cwd)
    if stdin is not None:
        import io

        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def proj(tmp_path):
    (tmp_path / "train.py").write_text(HAZARD)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def test_text_output_and_exit_codes(proj, capsys, monkeypatch):
    code, out, err = run(["train.py"], proj, capsys, monkeypatch)
    assert code == 1
    assert out.splitlines()[0].startswith("train.py:9:15: HPU005 `.item()` copies a device value to the host")
    assert out.splitlines()[-1] == "Found 1 finding (1 file checked)."
    code, out, _ = run(["clean.py"], proj, capsys, monkeypatch)
    assert (code, out) == (0, "All checks passed! (1 file checked)\n")
    code, _, _ = run(["--exit-zero", "train.py"], proj, capsys, monkeypatch)
    assert code == 0
    code, out, _ = run(["check", "-q", "train.py"], proj, capsys, monkeypatch)
    assert code == 1 and out.count("\n") == 1 and "Found" not in out


def test_json_output(proj, capsys, monkeypatch):
    code, out, _ = run(["--format", "json", "."], proj, capsys, monkeypatch)
    assert code == 1
    data = json.loads(out)
    assert data == [{
        "code": "HPU005", "name": "host-sync-every-step", "path": "train.py", "cell": None, "line": 9, "col": 15,
        "end_line": 9, "end_col": 26, "message": data[0]["message"], "fix": None,
    }]


def test_select_ignore_and_statistics(proj, capsys, monkeypatch):
    assert run(["--ignore", "HPU005", "."], proj, capsys, monkeypatch)[0] == 0
    assert run(["--select", "HPU001,HPU002", "."], proj, capsys, monkeypatch)[0] == 0
    assert run(["--select", "HPU00", "."], proj, capsys, monkeypatch)[0] == 1
    code, out, _ = run(["--statistics", "."], proj, capsys, monkeypatch)
    assert out.splitlines()[0].split() == ["1", "HPU005", "host-sync-every-step"]
    code, _, err = run(["--select", "HPU999", "."], proj, capsys, monkeypatch)
    assert code == 2 and "'HPU999' matches no rule" in err


def test_discovery_skips_venvs_git_and_excludes(proj, capsys, monkeypatch):
    for folder in (".git", ".venv", "build", "myenv"):
        (proj / folder).mkdir()
        (proj / folder / "t.py").write_text(HAZARD)
    (proj / "myenv" / "pyvenv.cfg").write_text("home = /usr\n")
    (proj / "pkg").mkdir()
    (proj / "pkg" / "t.py").write_text(HAZARD)
    code, out, _ = run(["."], proj, capsys, monkeypatch)
    assert sorted(line.split(":")[0] for line in out.splitlines() if "HPU" in line) == ["pkg/t.py", "train.py"]
    (proj / "pyproject.toml").write_text('[tool.hpulint]\nexclude = ["pkg"]\n')
    code, out, _ = run(["."], proj, capsys, monkeypatch)
    assert [line.split(":")[0] for line in out.splitlines() if "HPU" in line] == ["train.py"]


def test_config_file_is_found_upwards_and_cli_overrides(proj, capsys, monkeypatch):
    (proj / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.hpulint]\nignore = ["HPU005"]\n')
    sub = proj / "src"
    sub.mkdir()
    (sub / "t.py").write_text(HAZARD)
    assert run(["src"], proj, capsys, monkeypatch)[0] == 0
    assert run(["t.py"], sub, capsys, monkeypatch)[0] == 0
    assert run(["--isolated", "t.py"], sub, capsys, monkeypatch)[0] == 1
    assert run(["--select", "HPU005", "t.py"], sub, capsys, monkeypatch)[0] == 0  # ignore still applies
    (proj / "pyproject.toml").write_text('[tool.hpulint]\nselect = ["HPU005"]\nignore = ["HPU00"]\n')
    assert run(["t.py"], sub, capsys, monkeypatch)[0] == 1  # the more specific code wins


def test_per_file_ignores(proj, capsys, monkeypatch):
    (proj / "pyproject.toml").write_text('[tool.hpulint.per-file-ignores]\n"train*.py" = ["HPU005"]\n')
    (proj / "other.py").write_text(HAZARD)
    code, out, _ = run(["."], proj, capsys, monkeypatch)
    assert [line.split(":")[0] for line in out.splitlines() if "HPU" in line] == ["other.py"]


@pytest.mark.parametrize("body, message", [
    ('[tool.hpulint]\nselekt = ["HPU001"]\n', "unknown key 'selekt'"),
    ('[tool.hpulint]\ntarget = "tpu"\n', "target must be one of auto, hpu, xla"),
    ('[tool.hpulint]\nselect = "HPU001"\n', "select must be a list"),
    ('[tool.hpulint\n', "invalid TOML"),
])
def test_bad_config_is_a_clear_error(proj, capsys, monkeypatch, body, message):
    (proj / "pyproject.toml").write_text(body)
    code, out, err = run(["train.py"], proj, capsys, monkeypatch)
    assert code == 2
    assert "pyproject.toml" in err and message in err


def test_target_option(proj, capsys, monkeypatch):
    (proj / "loop.py").write_text(textwrap.dedent("""\
        def train(model, loader, optimizer):
            for x in loader:
                model(x).sum().backward()
                optimizer.step()
    """))
    assert run(["loop.py"], proj, capsys, monkeypatch)[0] == 0
    code, out, _ = run(["--target", "xla", "loop.py"], proj, capsys, monkeypatch)
    assert code == 1 and "loop.py:2:5: HPU004" in out


def test_suppressions(proj, capsys, monkeypatch):
    src = HAZARD.replace("print(loss.item())", "print(loss.item())  # noqa: HPU005")
    (proj / "a.py").write_text(src)
    (proj / "b.py").write_text(HAZARD.replace("print(loss.item())", "print(loss.item())  # noqa"))
    (proj / "c.py").write_text(HAZARD.replace("print(loss.item())", "print(loss.item())  # hpulint: ignore[HPU005]"))
    (proj / "d.py").write_text("# hpulint: noqa\n" + HAZARD)
    (proj / "e.py").write_text(HAZARD.replace("print(loss.item())", "print(loss.item())  # noqa: HPU001"))
    (proj / "f.py").write_text(HAZARD.replace("print(loss.item())", 'print(  # noqa: HPU005\n                loss.item())'))
    (proj / "g.py").write_text(HAZARD.replace("print(loss.item())", 's = "# noqa"; print(loss.item())'))
    code, out, _ = run(["a.py", "b.py", "c.py", "d.py", "e.py", "f.py", "g.py"], proj, capsys, monkeypatch)
    assert sorted(line.split(":")[0] for line in out.splitlines() if "HPU" in line) == ["e.py", "g.py"]


def test_a_syntax_error_is_reported_where_python_reports_it(proj, capsys, monkeypatch):
    # libcst's tokenizer errors all say line 1, and an unclosed bracket is found at the end
    (proj / "cont.py").write_text("import torch\n\n\nx = 1 \\ 2\n")
    (proj / "open.py").write_text("import torch\nfor x in range(3):\n    y = (x\n\n")
    code, out, err = run(["cont.py", "open.py"], proj, capsys, monkeypatch)
    assert code == 2
    assert err.splitlines() == [
        "cont.py:4:8: error: syntax error: unexpected character after line continuation character",
        "open.py:3:9: error: syntax error: '(' was never closed",
    ]


def test_bad_files_are_reported_and_the_run_goes_on(proj, capsys, monkeypatch):
    (proj / "broken.py").write_text("import torch\nfor x in range(3):\n    y = (x\n")
    (proj / "latin.py").write_bytes(b"x = 1\ns = '\xe9t\xe9'\nfor i in range(3): pass\n")
    (proj / "declared.py").write_bytes(b"# -*- coding: latin-1 -*-\ns = '\xe9t\xe9'\n" + HAZARD.encode())
    code, out, err = run(["."], proj, capsys, monkeypatch)
    assert code == 2
    assert "broken.py:3:" in err and "syntax error" in err
    assert "latin.py:2: error: not valid utf-8" in err
    findings = sorted(line.split(":")[0] for line in out.splitlines() if "HPU" in line)
    assert findings == ["declared.py", "train.py"]  # a declared encoding is honoured


def test_missing_path(proj, capsys, monkeypatch):
    code, _, err = run(["nope.py"], proj, capsys, monkeypatch)
    assert code == 2 and "nope.py: error: no such file or directory" in err


def test_a_crashing_rule_does_not_stop_the_others(proj, capsys, monkeypatch):
    from hpulint.rules.hpu002_equal_in_hot_path import EqualInHotPath

    def boom(self, node):
        raise ValueError("kaboom")

    monkeypatch.setattr(EqualInHotPath, "visit_Call", boom)
    (proj / "eq.py").write_text(HAZARD + "\n\ndef f(a, b):\n    return torch.equal(a, b)\n")
    code, out, err = run(["eq.py", "train.py"], proj, capsys, monkeypatch)
    assert code == 2
    assert re.search(r"^eq.py:\d+:\d+: error: rule HPU002 failed: ValueError: kaboom$", err, re.M)
    assert out.count("HPU005") == 2  # both files still report the other rule


def test_stdin(proj, capsys, monkeypatch):
    code, out, _ = run(["-", "--stdin-filename", "x/train.py"], proj, capsys, monkeypatch, stdin=HAZARD)
    assert code == 1 and out.startswith("x/train.py:9:15: HPU005")


def test_rule_command(capsys, monkeypatch, tmp_path):
    code, out, _ = run(["rule", "--all"], tmp_path, capsys, monkeypatch)
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == [
        "HPU001", "HPU002", "HPU003", "HPU004", "HPU005", "HPU006", "HPU007", "HPU008", "HPU009",
        "HPU010", "HPU011", "HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017", "HPU018"]
    code, _, err = run(["rule", "HPU999"], tmp_path, capsys, monkeypatch)
    assert code == 2 and "no rule 'HPU999'" in err


def test_version_and_module_entry_point(tmp_path):
    from hpulint import __version__

    out = subprocess.run([sys.executable, "-m", "hpulint", "--version"], capture_output=True, text=True)
    assert out.stdout.strip() == f"hpulint {__version__}"


def test_the_linter_never_imports_torch(tmp_path):
    (tmp_path / "t.py").write_text(HAZARD)
    code = (
        "import sys\n"
        "from hpulint.cli import main\n"
        f"rc = main([{str(tmp_path / 't.py')!r}, '-q'])\n"
        "assert 'torch' not in sys.modules, 'the linter imported torch'\n"
        "assert rc == 1\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_a_rule_failing_after_the_walk_keeps_the_other_rules_findings(proj, capsys, monkeypatch):
    from hpulint.rules.hpu002_equal_in_hot_path import EqualInHotPath

    def broken_report(self, node, message, **kw):
        def when():
            raise RuntimeError("late")
        self.ctx.add(self, node, message, None, when)

    monkeypatch.setattr(EqualInHotPath, "report", broken_report)
    (proj / "eq.py").write_text(HAZARD + "\n\nclass M(torch.nn.Module):\n    def forward(self, a, b):\n"
                                "        return torch.equal(a, b)\n")
    code, out, err = run(["--no-cache", "eq.py"], proj, capsys, monkeypatch)
    assert code == 2
    assert re.search(r"^eq.py:14:16: error: rule HPU002 failed: RuntimeError: late$", err, re.M)
    assert "eq.py:9:15: HPU005" in out


def test_no_silent_all_clear(tmp_path, capsys, monkeypatch):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.txt").write_text("not code\n")
    (tmp_path / "docs" / ".venv").mkdir()
    (tmp_path / "docs" / ".venv" / "x.py").write_text(HAZARD)
    code, out, err = run(["docs"], tmp_path, capsys, monkeypatch)
    assert (code, out) == (0, "No files checked.\n")
    assert err == ('hpulint: warning: docs: no file to check: no file in it matches include = '
                   '["*.py", "*.pyi", "*.ipynb"] (folders skipped: .venv)\n')
    (tmp_path / "nbs").mkdir()
    (tmp_path / "nbs" / "a.ipynb").write_text('{"cells": []}')
    (tmp_path / "nbs" / "b.py").write_text(HAZARD)
    (tmp_path / "pyproject.toml").write_text('[tool.hpulint]\nexclude = ["*.ipynb", "b.py"]\n')
    code, out, err = run(["nbs", "nbs/b.py", "docs/notes.txt"], tmp_path, capsys, monkeypatch)
    assert err.splitlines() == [
        'hpulint: warning: nbs: no file to check: all 2 files matching include = ["*.py", "*.pyi", '
        '"*.ipynb"] are excluded by exclude = ["*.ipynb", "b.py"]',
        'hpulint: warning: nbs/b.py: not checked: excluded by exclude = ["*.ipynb", "b.py"]',
    ]
    assert out == "All checks passed! (1 file checked)\n"  # the file named on the command line
    code, out, err = run(["--fix", "nbs"], tmp_path, capsys, monkeypatch)
    assert out == "No files checked.\n" and "nbs: no file to check" in err


def test_summary_and_statistics_count_the_files_checked(proj, capsys, monkeypatch):
    (proj / "nb.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    code, out, _ = run(["--statistics", "."], proj, capsys, monkeypatch)
    assert out.splitlines() == ["    1  HPU005      host-sync-every-step", "Found 1 finding (3 files checked)."]
    code, out, _ = run(["--fix", "."], proj, capsys, monkeypatch)
    assert out.splitlines()[-1] == "Found 1 finding (0 fixed, 1 remaining; 3 files checked)."


def test_test_code_is_left_out_unless_asked_for(tmp_path, capsys, monkeypatch):
    """Test files assert results: their host reads are the point. They are neither checked nor
    indexed unless `lint-tests = true`."""
    (tmp_path / "pyproject.toml").write_text("[tool.hpulint]\n")
    (tmp_path / "train.py").write_text(HAZARD)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "helpers.py").write_text(HAZARD)
    (tmp_path / "tests" / "test_loader.py").write_text("def test_loader():\n    pass\n")
    (tmp_path / "test_train.py").write_text(HAZARD)
    code, out, err = run(["--format", "concise", "--no-cache", "."], tmp_path, capsys, monkeypatch)
    assert code == 1 and [line.split(":")[0] for line in out.splitlines() if "HPU" in line] == ["train.py"]
    # a `tests/` folder that holds no test anywhere holds scripts: checked
    (tmp_path / "tests" / "test_loader.py").unlink()
    code, out, err = run(["--format", "concise", "--no-cache", "."], tmp_path, capsys, monkeypatch)
    assert sorted(line.split(":")[0] for line in out.splitlines() if "HPU" in line) == ["tests/helpers.py", "train.py"]
    (tmp_path / "tests" / "test_loader.py").write_text("def test_loader():\n    pass\n")
    code, out, err = run(["--no-cache", "test_train.py"], tmp_path, capsys, monkeypatch)
    assert code == 0 and "test_train.py: not checked: test code (lint-tests = true" in err
    (tmp_path / "pyproject.toml").write_text("[tool.hpulint]\nlint-tests = true\n")
    code, out, err = run(["--format", "concise", "--no-cache", "."], tmp_path, capsys, monkeypatch)
    assert sorted(line.split(":")[0] for line in out.splitlines() if "HPU" in line) == [
        "test_train.py", "tests/helpers.py", "train.py"]


def test_a_script_named_for_what_it_tries_out_is_no_test_code(tmp_path, capsys, monkeypatch):
    # `distributed_test.py`, a training run of the distributed setup: checked; a `*_test.py`
    # that defines a test (or imports pytest/unittest) is test code
    (tmp_path / "pyproject.toml").write_text("[tool.hpulint]\n")
    (tmp_path / "distributed_test.py").write_text(HAZARD)
    (tmp_path / "model_test.py").write_text(HAZARD + "\n\ndef test_train():\n    pass\n")
    (tmp_path / "loader_tests.py").write_text("import unittest\n" + HAZARD)
    code, out, err = run(["--format", "concise", "--no-cache", "."], tmp_path, capsys, monkeypatch)
    assert code == 1 and [line.split(":")[0] for line in out.splitlines() if "HPU" in line] == [
        "distributed_test.py"]


def test_the_command_writes_everything_before_its_quick_exit(tmp_path):
    # `hpulint` / `python -m hpulint` leave a lint with os._exit (no teardown): the whole
    # report, the exit status and the cache must be out by then
    for k in range(40):
        (tmp_path / f"m{k}.py").write_text(HAZARD)
    (tmp_path / "pyproject.toml").write_text("[tool.hpulint]\n")
    cmd = [sys.executable, "-m", "hpulint", "check", "--format", "json", "."]
    first = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert first.returncode == 1, first.stderr
    findings = json.loads(first.stdout)
    assert {f["path"] for f in findings} == {f"m{k}.py" for k in range(40)}
    assert (tmp_path / ".hpulint_cache").is_dir()
    again = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert (again.returncode, again.stdout) == (1, first.stdout)
    # a command other than a lint exits the usual way
    rule = subprocess.run([sys.executable, "-m", "hpulint", "rule", "HPU001"], capture_output=True, text=True)
    assert rule.returncode == 0 and "HPU001" in rule.stdout
