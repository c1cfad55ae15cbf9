"""The flake8 plugin reports what the CLI reports, at the same line:column, and behaves as a
flake8 plugin should (selection, noqa, per-file-ignores, bad input, no torch import)."""
from __future__ import annotations

import subprocess
import sys


from fixture_format import FIXTURES
from hpulint import Config, lint_source
from snippets import HAZARD



def flake8(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8", "--isolated", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


def hpu_lines(out: str) -> list:
    return [line for line in out.splitlines() if ": HPU" in line]


def test_same_findings_as_the_cli_on_every_fixture():
    # single-file fixtures (the projects in fixtures/projects/ are tests/test_projects.py's)
    files = sorted(p for p in FIXTURES.rglob("*.py") if "projects" not in p.relative_to(FIXTURES).parts)
    assert files, "no fixtures"
    proc = flake8("--select", "HPU", *files)
    got = sorted((line.split(": ")[0], line.split(": ")[1].split()[0]) for line in hpu_lines(proc.stdout))
    want = []
    for path in files:
        for f in lint_source(path.read_text(), path=str(path), config=Config()):
            want.append((f"{path}:{f.line}:{f.col}", f.code))
    assert got == sorted(want)
    assert proc.returncode == (1 if want else 0)


def test_columns_and_message(tmp_path):
    (tmp_path / "t.py").write_text(HAZARD)
    proc = flake8("--select", "HPU", "t.py", cwd=tmp_path)
    assert hpu_lines(proc.stdout) == [
        "t.py:9:15: " + next(f"{f.code} {f.message}" for f in lint_source(HAZARD))]


def test_selection_noqa_and_per_file_ignores(tmp_path):
    (tmp_path / "t.py").write_text(HAZARD)
    (tmp_path / "n.py").write_text(HAZARD.replace("loss.item())", "loss.item())  # noqa: HPU005"))
    (tmp_path / "p.py").write_text(HAZARD)
    assert hpu_lines(flake8("--select", "HPU", "--extend-ignore", "HPU005", "t.py", cwd=tmp_path).stdout) == []
    assert hpu_lines(flake8("--select", "E,W", "t.py", cwd=tmp_path).stdout) == []
    assert hpu_lines(flake8("--select", "HPU", "n.py", cwd=tmp_path).stdout) == []
    out = flake8("--select", "HPU", "--per-file-ignores", "p.py:HPU005", "t.py", "p.py", cwd=tmp_path).stdout
    assert [line.split(":")[0] for line in hpu_lines(out)] == ["t.py"]


def test_config_target_applies(tmp_path):
    (tmp_path / "loop.py").write_text(
        "def train(model, loader, optimizer):\n    for x in loader:\n"
        "        model(x).sum().backward()\n        optimizer.step()\n")
    assert hpu_lines(flake8("--select", "HPU", "loop.py", cwd=tmp_path).stdout) == []
    (tmp_path / "pyproject.toml").write_text('[tool.hpulint]\ntarget = "xla"\n')
    assert [line[:15] for line in hpu_lines(flake8("--select", "HPU", "loop.py", cwd=tmp_path).stdout)] == [
        "loop.py:2:5: HP"]


def test_bad_input_does_not_crash_flake8(tmp_path):
    (tmp_path / "bad.py").write_text("for x in range(3):\n    y = (x\n")
    (tmp_path / "bin.py").write_bytes(b"x = '\xff\xfe'\nfor i in range(2): pass\n")
    proc = flake8("--select", "HPU,E9", "bad.py", "bin.py", cwd=tmp_path)
    assert "Traceback" not in proc.stderr
    assert "bad.py:2" in proc.stdout and "E999" in proc.stdout


def test_plugin_never_imports_torch(tmp_path):
    (tmp_path / "t.py").write_text(HAZARD)
    code = (
        "import sys\n"
        "from flake8.main.cli import main\n"
        "try:\n"
        f"    main(['--isolated', '--select', 'HPU', {str(tmp_path / 't.py')!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert 'torch' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "HPU005" in proc.stdout
