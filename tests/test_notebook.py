"""Notebooks as a user meets them: findings at cell:line, fixes written back into the cells with
the rest of the file byte for byte unchanged, IPython lines left alone, bad notebooks reported."""
from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest

from hpulint.cli import main
from hpulint.config import Config
from hpulint.notebook import Notebook, NotebookError, check_notebook, jsontext
from hpulint.notebook.magics import neutralise
from notebook_fixtures import NOTEBOOKS, all_notebooks
from snippets import HAZARD

FIXTURES = all_notebooks()
WITH_FIXES = [fx for fx in FIXTURES if fx.fixed_expect is not None]


def run(args, cwd: Path, capsys, monkeypatch, stdin: str | None = None):
    monkeypatch.chdir(cwd)
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def notebook(*cells, indent=1, ensure_ascii=False, sort_keys=True) -> str:
    """A notebook's text: each cell a code cell given as a string (or a full cell dict)."""
    out = []
    for c in cells:
        if isinstance(c, dict):
            out.append(c)
        else:
            out.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                        "source": c.splitlines(True)})
    nb = {"cells": out, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=indent, ensure_ascii=ensure_ascii, sort_keys=sort_keys) + "\n"


def outside_sources(text: str) -> str:
    """The file's text with every code cell's source value cut out."""
    spans = sorted(jsontext.source_spans(text).values(), key=lambda s: -s.start)
    for s in spans:
        text = text[: s.start] + "<source>" + text[s.end:]
    return text


# --- the fixture notebooks -------------------------------------------------------------------


def test_there_is_a_notebook_per_rule_family():
    found = {code for fx in FIXTURES for code, _, _ in fx.expect}
    families = [{"HPU001", "HPU011"}, {"HPU002", "HPU005", "HPU008"}, {"HPU003", "HPU006", "HPU007"},
                {"HPU004"}, {"HPU009", "HPU010"}]
    assert all(found & family for family in families)
    assert any(not fx.expect for fx in FIXTURES)  # and one with nothing to report


@pytest.mark.parametrize("fx", FIXTURES, ids=[f.id for f in FIXTURES])
def test_notebook_findings_at_cell_and_line(fx):
    result = check_notebook(fx.path, Config())
    assert result.errors == []
    assert [(f.code, f.cell, f.line) for f in result.findings] == fx.expect


def test_a_folder_of_notebooks_reports_each_hazard(capsys, monkeypatch):
    code, out, _ = run(["--no-cache", "fixtures/notebooks"], NOTEBOOKS.parent.parent, capsys, monkeypatch)
    assert code == 1
    import re

    got = sorted(re.match(r"^(.*?):cell (\d+):(\d+):\d+: (HPU\d{3})", ln).groups()
                 for ln in out.splitlines() if ": HPU" in ln)
    assert got == sorted((f"fixtures/notebooks/{fx.path.name}", str(cell), str(line), code)
                         for fx in FIXTURES for code, cell, line in fx.expect)
    assert "fixtures/notebooks/loop_constants.ipynb:cell 4:4:15: HPU001 loop counter `i`" in out


@pytest.mark.parametrize("fx", WITH_FIXES, ids=[f.id for f in WITH_FIXES])
def test_fix_writes_the_expected_notebook_and_keeps_the_rest(fx, tmp_path, capsys, monkeypatch):
    nb = tmp_path / fx.path.name
    shutil.copy(fx.path, nb)
    run(["--no-cache", "--fix", "--unsafe-fixes", nb.name], tmp_path, capsys, monkeypatch)
    fixed = nb.read_bytes()
    assert fixed == fx.fixed.read_bytes()
    assert fixed != fx.path.read_bytes()
    # outputs, metadata, layout, key order, the final newline: all as they were
    assert outside_sources(fixed.decode()) == outside_sources(fx.path.read_text(encoding="utf-8"))
    result = check_notebook(nb, Config())
    assert [(f.code, f.cell, f.line) for f in result.findings] == fx.fixed_expect
    # a second run has nothing left to do
    before = nb.read_bytes()
    run(["--no-cache", "--fix", "--unsafe-fixes", nb.name], tmp_path, capsys, monkeypatch)
    assert nb.read_bytes() == before


@pytest.mark.parametrize("fx", FIXTURES, ids=[f.id for f in FIXTURES])
def test_fix_with_no_fix_to_apply_leaves_the_file_byte_identical(fx, tmp_path, capsys, monkeypatch):
    nb = tmp_path / fx.path.name
    shutil.copy(fx.path, nb)
    # HPU005, HPU009 and HPU010 have no fix; clean.ipynb has nothing at all
    run(["--no-cache", "--fix", "--unsafe-fixes", "--select", "HPU005,HPU009,HPU010", nb.name],
        tmp_path, capsys, monkeypatch)
    assert nb.read_bytes() == fx.path.read_bytes()


def test_diff_shows_the_cells_and_writes_nothing(tmp_path, capsys, monkeypatch):
    nb = tmp_path / "step_markers.ipynb"
    shutil.copy(NOTEBOOKS / "step_markers.ipynb", nb)
    code, out, _ = run(["--no-cache", "--diff", nb.name], tmp_path, capsys, monkeypatch)
    assert code == 1
    assert out.splitlines()[:3] == ["--- a/step_markers.ipynb:cell 3", "+++ b/step_markers.ipynb:cell 3",
                                    "@@ -4,5 +4,7 @@"]
    assert "+        htcore.mark_step()" in out
    assert nb.read_bytes() == (NOTEBOOKS / "step_markers.ipynb").read_bytes()


# --- writing back: the layout the file had ----------------------------------------------------


@pytest.mark.parametrize("layout", [
    dict(indent=1, ensure_ascii=False, sort_keys=True),  # nbformat
    dict(indent=2, ensure_ascii=True, sort_keys=False),  # json.dump's defaults, VS Code's indent
    dict(indent=None, ensure_ascii=True, sort_keys=False),  # all on one line
])
def test_each_cell_source_rewritten_as_is_gives_the_same_bytes(layout):
    text = notebook("import torch\nx = 'caf\u00e9'\n", "", {"cell_type": "code", "execution_count": 1,
                    "metadata": {}, "outputs": [], "source": "y = 1\nz = 2"}, "%time f()", **layout)
    nb = Notebook.from_text(text, "n.ipynb")
    style = jsontext.Style(text)
    for cell in nb.cells:
        assert style.source(cell.text, cell.span) == text[cell.span.start: cell.span.end]
    for fx in FIXTURES:
        raw = fx.path.read_text(encoding="utf-8")
        for cell in Notebook.from_text(raw, "x").cells:
            assert jsontext.Style(raw).source(cell.text, cell.span) == raw[cell.span.start: cell.span.end]


def test_fix_keeps_a_bom_crlf_and_the_missing_final_newline(tmp_path, capsys, monkeypatch):
    from snippets import GAUDI_LOOP

    text = notebook(GAUDI_LOOP, indent=2).rstrip("\n").replace("\n", "\r\n")
    nb = tmp_path / "crlf.ipynb"
    nb.write_bytes(b"\xef\xbb\xbf" + text.encode())
    code, out, _ = run(["--no-cache", "--fix", nb.name], tmp_path, capsys, monkeypatch)
    data = nb.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and not data.endswith(b"\n")
    assert b"\n" not in data.replace(b"\r\n", b"")
    src = json.loads(data.decode("utf-8-sig"))["cells"][0]["source"]
    assert src[8:11] == ["        loss.backward()\n", "        htcore.mark_step()\n", "        optimizer.step()\n"]
    assert outside_sources(data.decode("utf-8-sig")) == outside_sources(text)


def test_a_fix_that_would_drop_an_ipython_line_is_refused(tmp_path):
    nb = Notebook.from_text(notebook("%time x = 1\ny = 2\n"), "n.ipynb")
    with pytest.raises(NotebookError, match="IPython line '%time x = 1'"):
        nb.with_python("y = 2\n")
    # and one that keeps it, moved or not, restores it in its cell
    out = json.loads(nb.with_python("pass  # hpulint-ipython-line-0\ny = 3\n"))
    assert out["cells"][0]["source"] == ["%time x = 1\n", "y = 3\n"]


# --- IPython lines -----------------------------------------------------------------------------


def test_ipython_lines_become_pass_and_python_stays():
    cell = ("%matplotlib inline\n!pip install x\nfiles = !ls\nout = %sx ls\ntorch.cat?\n??torch\n"
            "/print 1\nget_ipython().run_line_magic('env', 'A=1')\n"
            "for i in range(3):\n    %time f(i)\n"
            "total = (3\n         % 2)\nnote = '''\n%not a magic\n'''\nx = 1  # why?\n!echo a \\\n  b\n")
    part = neutralise(cell, 0)
    kept = [ln for ln in part.lines if "hpulint-ipython-line" not in ln]
    assert kept == ["for i in range(3):\n", "total = (3\n", "         % 2)\n", "note = '''\n",
                    "%not a magic\n", "'''\n", "x = 1  # why?\n"]
    assert len(part.lines) == cell.count("\n")
    assert part.lines[9] == "    pass  # hpulint-ipython-line-8\n"
    assert [part.originals[k] for k in (0, 8, 9, 10)] == [
        "%matplotlib inline\n", "    %time f(i)\n", "!echo a \\\n", "  b\n"]
    compile("".join(part.lines), "cell", "exec")


def test_cell_magics():
    assert neutralise("%%bash\necho hi\n", 0).python is False
    assert neutralise("%%writefile x.py\nimport os\n", 0).python is False
    timed = neutralise("%%time\nx = f()\n", 0)
    assert timed.python and timed.lines == ["pass  # hpulint-ipython-line-0\n", "x = f()\n"]


def test_findings_in_a_cell_magic_cell_are_left_out(tmp_path):
    nb = tmp_path / "n.ipynb"
    nb.write_text(notebook("%%bash\nfor x in 1 2; do echo $x; done\n", HAZARD))
    result = check_notebook(nb, Config())
    assert result.errors == [] and [(f.code, f.cell, f.line, f.col) for f in result.findings] == [
        ("HPU005", 2, 9, 15)]


# --- errors ------------------------------------------------------------------------------------


def test_invalid_notebooks_are_clear_per_file_errors(tmp_path, capsys, monkeypatch):
    (tmp_path / "broken.ipynb").write_text('{"cells": [\n  {"cell_type": "code",\n   "source": [}\n]}\n')
    (tmp_path / "old.ipynb").write_text('{"worksheets": [], "nbformat": 3}\n')
    (tmp_path / "list.ipynb").write_text('[1, 2]\n')
    (tmp_path / "syntax.ipynb").write_text(notebook("import torch\n", "loss.backward(\n"))
    (tmp_path / "train.ipynb").write_text(notebook(HAZARD))
    code, out, err = run(["--no-cache", "."], tmp_path, capsys, monkeypatch)
    assert code == 2
    assert err.splitlines() == [
        "broken.ipynb:3:15: error: not a valid notebook: invalid JSON: Expecting value",
        "list.ipynb: error: not a valid notebook: no top-level \"cells\" list",
        "old.ipynb: error: nbformat 3 notebooks are not supported (convert with `jupyter nbconvert --to notebook`)",
        "syntax.ipynb:cell 2:1:13: error: syntax error: '(' was never closed",
    ]
    assert "train.ipynb:cell 1:9:15: HPU005" in out  # the other files are still linted


def test_fix_of_an_invalid_notebook_reports_and_writes_nothing(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "broken.ipynb"
    bad.write_text("{not json")
    code, _, err = run(["--no-cache", "--fix", bad.name], tmp_path, capsys, monkeypatch)
    assert code == 2 and "broken.ipynb:1:2: error: not a valid notebook: invalid JSON" in err
    assert bad.read_text() == "{not json"


# --- output formats, stdin, configuration ---------------------------------------------------


def test_formats_carry_the_cell(tmp_path, capsys, monkeypatch):
    (tmp_path / "train.ipynb").write_text(notebook("import torch\n", HAZARD))
    code, out, _ = run(["--no-cache", "--format", "json", "train.ipynb"], tmp_path, capsys, monkeypatch)
    (f,) = json.loads(out)
    assert (f["path"], f["cell"], f["line"], f["col"]) == ("train.ipynb", 2, 9, 15)
    _, out, _ = run(["--no-cache", "--format", "json-lines", "train.ipynb"], tmp_path, capsys, monkeypatch)
    assert json.loads(out)["cell"] == 2
    _, out, _ = run(["--no-cache", "--format", "concise", "train.ipynb"], tmp_path, capsys, monkeypatch)
    assert out.startswith("train.ipynb:cell 2:9:15: HPU005 ")
    _, out, _ = run(["--no-cache", "--format", "github", "train.ipynb"], tmp_path, capsys, monkeypatch)
    assert out.startswith("::warning file=train.ipynb,line=9,col=15,endLine=9,endColumn=26,"
                          "title=HPU005 host-sync-every-step (cell 2)::HPU005 cell 2, line 9: `.item()`")
    _, out, _ = run(["--format", "sarif", "train.ipynb"], tmp_path, capsys, monkeypatch)
    (res,) = json.loads(out)["runs"][0]["results"]
    assert res["properties"] == {"cell": 2}
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 9


def test_stdin_notebook(tmp_path, capsys, monkeypatch):
    from snippets import GAUDI_LOOP

    text = notebook(GAUDI_LOOP)
    code, out, _ = run(["-", "--stdin-filename", "nb.ipynb"], tmp_path, capsys, monkeypatch, stdin=text)
    assert code == 1 and out.startswith("nb.ipynb:cell 1:6:5: HPU004")
    code, out, err = run(["--fix", "-", "--stdin-filename", "nb.ipynb"], tmp_path, capsys, monkeypatch, stdin=text)
    assert "        htcore.mark_step()\n" in json.loads(out)["cells"][0]["source"]


def test_include_and_exclude_decide_which_notebooks(tmp_path, capsys, monkeypatch):
    (tmp_path / "nbs").mkdir()
    (tmp_path / "nbs" / "a.ipynb").write_text(notebook(HAZARD))
    (tmp_path / "b.ipynb").write_text(notebook(HAZARD))
    (tmp_path / "c.pyw").write_text(HAZARD)
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text("[tool.hpulint]\n")
    _, out, _ = run(["--no-cache", "."], tmp_path, capsys, monkeypatch)
    assert [ln.split(":")[0] for ln in out.splitlines() if "HPU005" in ln] == ["b.ipynb", "nbs/a.ipynb"]
    cfg.write_text('[tool.hpulint]\nexclude = ["nbs"]\nextend-include = ["*.pyw"]\n')
    _, out, _ = run(["--no-cache", "."], tmp_path, capsys, monkeypatch)
    assert [ln.split(":")[0] for ln in out.splitlines() if "HPU005" in ln] == ["b.ipynb", "c.pyw"]
    cfg.write_text('[tool.hpulint]\ninclude = ["*.py"]\n')
    _, out, _ = run(["--no-cache", "."], tmp_path, capsys, monkeypatch)
    assert "HPU005" not in out


def test_cached_and_parallel_runs_report_the_same_cells(tmp_path, capsys, monkeypatch):
    for name in ("host_syncs", "shapes", "loop_constants", "step_markers"):
        shutil.copy(NOTEBOOKS / f"{name}.ipynb", tmp_path)
    first = run(["--jobs", "1", "."], tmp_path, capsys, monkeypatch)[1]
    assert "host_syncs.ipynb:cell 4:14:19: HPU005" in first
    assert (tmp_path / ".hpulint_cache").is_dir()
    assert run(["--jobs", "1", "."], tmp_path, capsys, monkeypatch)[1] == first  # from the cache
    assert run(["--no-cache", "--jobs", "2", "."], tmp_path, capsys, monkeypatch)[1] == first
