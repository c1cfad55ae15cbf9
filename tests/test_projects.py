"""Multi-file fixture projects (fixtures/projects/): facts that cross files.

A model whose nn.Module base is in another file, a helper called from a step loop in another
file, a counter passed into another file's index, and look-alikes that must stay clean. Each
file's `# expect:` header says what linting the project must report in it; the command line,
the flake8 plugin and linting one file of the project (as pre-commit does with changed files)
must all report exactly that, with the same messages.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fixture_format import ROOT, project_fixtures
from hpulint import Config, lint_source
from hpulint.cli import main

PROJECTS = project_fixtures()


def expected(fixtures) -> list:
    return sorted((fx.path.relative_to(ROOT).as_posix(), line, code)
                  for fx in fixtures for code, line in fx.expect)


def cli_findings(capsys, *paths) -> list:
    code = main(["--no-cache", "--format", "json", *paths])
    assert code in (0, 1)
    data = json.loads(capsys.readouterr().out)
    return sorted((f["path"], f["line"], f["code"], f["message"]) for f in data)


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize("project", sorted(PROJECTS), ids=lambda p: p.name)
def test_project_findings_are_the_expected_ones(project, capsys):
    whole = cli_findings(capsys, project.relative_to(ROOT).as_posix())
    assert [f[:3] for f in whole] == expected(PROJECTS[project])


@pytest.mark.parametrize("project", sorted(PROJECTS), ids=lambda p: p.name)
def test_one_file_of_a_project_gets_the_same_findings(project, capsys):
    whole = cli_findings(capsys, project.relative_to(ROOT).as_posix())
    for fx in PROJECTS[project]:
        rel = fx.path.relative_to(ROOT).as_posix()
        alone = cli_findings(capsys, rel)
        assert alone == [f for f in whole if f[0] == rel], rel


def test_the_flake8_plugin_reports_the_same(capsys):
    pytest.importorskip("flake8")
    folder = "fixtures/projects"
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "HPU", "--format",
                           "%(path)s\t%(row)d\t%(code)s\t%(text)s", folder],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    got = sorted((Path(p).as_posix().removeprefix("./"), int(row), code, text)
                 for p, row, code, text in (line.split("\t", 3) for line in proc.stdout.splitlines()))
    assert got == cli_findings(capsys, folder)


def test_linted_alone_a_file_loses_what_other_files_say():
    """Without its project, nothing says that log_loss() runs in a step loop (train.py calls it):
    the project index is what finds the hazard in utils/metrics.py."""
    metrics = ROOT / "fixtures/projects/trainer/utils/metrics.py"
    assert lint_source(metrics.read_text(), path="metrics.py", config=Config()) == []


def test_a_loose_script_is_not_linked_with_what_its_folder_holds_further_down(tmp_path, capsys,
                                                                              monkeypatch):
    """A script in a folder with no project marker (~/Downloads, /tmp) is its own project: a
    checkout further down that happens to import a module of the same name does not make the
    script's function hot. A sibling script that calls it does."""
    (tmp_path / "bench.py").write_text(
        "import torch\n"
        "import torch_xla.core.xla_model as xm\n\n\n"
        "def measure(t):\n"
        "    return t.sum().item()\n")
    nested = tmp_path / "checkouts" / "xla" / "benchmarks"
    nested.mkdir(parents=True)
    (nested / "runner.py").write_text(
        "import torch\n"
        "import torch_xla.core.xla_model as xm\n"
        "from bench import measure\n\n\n"
        "def run(model, loader):\n"
        "    for x in loader:\n"
        "        print(measure(model(x)))\n"
        "        xm.mark_step()\n")
    monkeypatch.chdir(tmp_path)
    assert cli_findings(capsys, "bench.py") == []
    (tmp_path / "run.py").write_text((nested / "runner.py").read_text())
    assert [f[:3] for f in cli_findings(capsys, "bench.py")] == [("bench.py", 6, "HPU005")]


def test_a_loose_script_still_sees_the_modules_it_imports(tmp_path, capsys, monkeypatch):
    """No project marker: the script's imports are followed into sub-folders (`from src.model
    import Net`), so a decode loop calling the imported model is a step loop."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(
        "import torch.nn as nn\n\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n\n"
        "    def decode(self, x):\n"
        "        return self.fc(x)\n")
    (tmp_path / "translate.py").write_text(
        "import torch\n"
        "import torch_xla.core.xla_model as xm\n"
        "from src.model import Net\n\n\n"
        "def greedy(tr, x, n):\n"
        "    for _ in range(n):\n"
        "        out = tr.decode(x)\n"
        "        word = out.argmax().item()\n"
        "    return word\n\n\n"
        "def main():\n"
        "    print(greedy(Net(), torch.zeros(4, device=xm.xla_device()), 8))\n")
    monkeypatch.chdir(tmp_path)
    assert [f[:3] for f in cli_findings(capsys, "translate.py")] == [("translate.py", 9, "HPU005")]


def test_the_real_code_benchmark_lints_a_checkout_as_its_clone(tmp_path):
    """benchmarks/real_code.py lints checkouts extracted without `.git`, whose clone has one: the
    checkout is the project, so a helper's caller in another sub-folder is indexed (a forward()
    that runs it every step), as `hpulint check .` in the clone finds it. Indexed as a loose
    folder (the labelled file, its siblings, what they import), the caller is not seen."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import real_code
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    (tmp_path / "pkg" / "arch").mkdir(parents=True)
    (tmp_path / "pkg" / "models").mkdir()
    for d in ("pkg", "pkg/arch", "pkg/models"):
        (tmp_path / d / "__init__.py").write_text("")
    (tmp_path / "pkg" / "arch" / "prep.py").write_text(
        "import torch\n\n\n"
        "def keep_images(ids, feats):\n"
        "    where = torch.where(ids == 7)\n"
        "    feats[where] = 0\n"
        "    return feats\n")
    (tmp_path / "pkg" / "models" / "net.py").write_text(
        "import torch\n"
        "import habana_frameworks.torch.core as htcore\n"
        "from pkg.arch.prep import keep_images\n\n\n"
        "class Net(torch.nn.Module):\n"
        "    def forward(self, ids, feats):\n"
        "        return keep_images(ids, feats).sum()\n")
    found, errors, _, indexed = real_code.lint_repo(tmp_path, ["pkg/arch/prep.py"], 1)
    assert errors == [] and indexed == 5
    assert found[("pkg/arch/prep.py", "HPU006")] == [(5, 5)]
    from hpulint.cli import discover
    from hpulint.index import index_for
    loose = index_for([str(tmp_path / "pkg/arch/prep.py")], tmp_path, discover, Config())
    assert sorted(Path(i.path).name for i in loose) == ["__init__.py", "prep.py"]
