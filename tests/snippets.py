"""Source snippets several test modules lint, fix or run as files, and a helper that lints a small
project written into a temporary folder."""
import textwrap
from pathlib import Path


def lint_project(root: Path, files: dict, capsys, monkeypatch) -> list:
    """Write ``files`` (relative path -> source) under ``root`` with an empty pyproject.toml, run
    `hpulint check --no-cache .` there and return its findings as sorted "path:line:col:CODE"."""
    from hpulint.cli import main

    (root / "pyproject.toml").write_text("")
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    monkeypatch.chdir(root)
    main(["check", "--no-cache", "--exit-zero", "."])
    out = capsys.readouterr().out
    return sorted(line.split(" ")[0] + line.split(" ")[1] for line in out.splitlines() if ": HPU" in line)


# a training loop that reads the loss on the host every step: HPU005 at 9:15
HAZARD = """\
import torch


def train(model, loader, optimizer):
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(loss.item())
"""

# a Gaudi training loop with no mark_step: HPU004 at 6:5, fixable
GAUDI_LOOP = """\
import torch
import habana_frameworks.torch.core as htcore


def train(model, loader, optimizer):
    for data, target in loader:
        optimizer.zero_grad()
        loss = model(data).sum()
        loss.backward()
        optimizer.step()
"""


def found(src: str, select: tuple = ()) -> list:
    """(code, line) of each finding linting ``src`` (dedented) as one file, `run.py`; only the
    codes in ``select`` when it is given."""
    from hpulint.engine import lint_source

    return [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "run.py")
            if not select or f.code in select]


# the compile rules, and the helpers the compile-kind tests share
COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def compile_found(src: str) -> list:
    """(code, line) of each compile-rule finding on ``src``."""
    return found(src, COMPILE)


def compile_messages(src: str) -> list:
    """The message of each compile-rule finding on ``src``."""
    from hpulint import Config, lint_source

    return [f.message for f in lint_source(textwrap.dedent(src), "t.py", Config()) if f.code in COMPILE]


def fixture_code(rel: str) -> str:
    """A fixture's code without its header comments (`fixtures/HPU012/bad_....py`), so a test can
    assert on it with the lines it has in the file minus the header."""
    lines = (Path(__file__).resolve().parent.parent / "fixtures" / rel).read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    return "".join(lines[start:])
