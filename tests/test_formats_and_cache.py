"""Output formats a CI system reads, parallel workers, and the content-hash cache."""
from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

from hpulint.cli import main
from snippets import HAZARD



def run(args, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(list(args))
    return code, capsys.readouterr()


def test_github_annotations(tmp_path, capsys, monkeypatch):
    (tmp_path / "t.py").write_text(HAZARD)
    code, cap = run(["--format", "github", "t.py"], tmp_path, capsys, monkeypatch)
    assert code == 1
    (line,) = cap.out.splitlines()
    assert line.startswith("::warning file=t.py,line=9,col=15,endLine=9,endColumn=26,"
                           "title=HPU005 host-sync-every-step::HPU005 `.item()` copies")


def test_json_lines_and_concise(tmp_path, capsys, monkeypatch):
    (tmp_path / "t.py").write_text(HAZARD)
    (tmp_path / "u.py").write_text(HAZARD)
    _, cap = run(["--format", "json-lines", "."], tmp_path, capsys, monkeypatch)
    rows = [json.loads(line) for line in cap.out.splitlines()]
    assert [(r["path"], r["line"], r["code"]) for r in rows] == [("t.py", 9, "HPU005"), ("u.py", 9, "HPU005")]
    _, cap = run(["--format", "concise", "t.py"], tmp_path, capsys, monkeypatch)
    assert cap.out.startswith("t.py:9:15: HPU005 ") and cap.out.count("\n") == 1


def test_sarif(tmp_path, capsys, monkeypatch):
    (tmp_path / "t.py").write_text(HAZARD)
    _, cap = run(["--format", "sarif", "t.py"], tmp_path, capsys, monkeypatch)
    doc = json.loads(cap.out)
    assert doc["version"] == "2.1.0"
    run0 = doc["runs"][0]
    rules = run0["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules][:5] == ["HPU001", "HPU002", "HPU003", "HPU004", "HPU005"]
    assert all(r["helpUri"].endswith(f"rules/{r['id']}.md") for r in rules)
    (res,) = run0["results"]
    assert res["ruleId"] == "HPU005" and rules[res["ruleIndex"]]["id"] == "HPU005"
    assert res["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 9, "startColumn": 15, "endLine": 9, "endColumn": 26}


def test_jobs_give_the_same_findings(tmp_path, capsys, monkeypatch):
    for i in range(12):
        (tmp_path / f"t{i:02d}.py").write_text(HAZARD if i % 3 else "x = 1\n")
    _, one = run(["--no-cache", "-j", "1", "--format", "json", "."], tmp_path, capsys, monkeypatch)
    _, two = run(["--no-cache", "-j", "2", "--format", "json", "."], tmp_path, capsys, monkeypatch)
    assert json.loads(one.out) == json.loads(two.out) and len(json.loads(one.out)) == 8


def test_cache_reuses_unchanged_files_and_sees_changes(tmp_path, capsys, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.hpulint]\n")
    (tmp_path / "t.py").write_text(HAZARD)
    code, cap = run(["-j", "1", "t.py"], tmp_path, capsys, monkeypatch)
    assert code == 1
    cache = tmp_path / ".hpulint_cache"
    assert (cache / "CACHEDIR.TAG").exists() and (cache / ".gitignore").read_text() == "*\n"
    entries = [p for p in cache.rglob("*") if p.is_file() and len(p.name) == 40]
    assert len(entries) == 2  # the file's summary and its result

    # a cached result is used: poison the parser and run again
    import hpulint.engine as engine

    monkeypatch.setattr(engine.cst, "parse_module", lambda *a, **k: (_ for _ in ()).throw(AssertionError("parsed")))
    code, cap2 = run(["-j", "1", "t.py"], tmp_path, capsys, monkeypatch)
    assert code == 1 and cap2.out == cap.out
    monkeypatch.undo()

    # a changed file or a changed config is linted again
    (tmp_path / "t.py").write_text(HAZARD.replace("print(loss.item())", "pass"))
    assert run(["-j", "1", "t.py"], tmp_path, capsys, monkeypatch)[0] == 0
    (tmp_path / "t.py").write_text(HAZARD)
    assert run(["-j", "1", "--ignore", "HPU005", "t.py"], tmp_path, capsys, monkeypatch)[0] == 0

    code, cap = run(["clean"], tmp_path, capsys, monkeypatch)
    assert code == 0 and not cache.exists()
    run(["--no-cache", "t.py"], tmp_path, capsys, monkeypatch)
    assert not cache.exists()


def test_read_only_tree_is_linted_uncached(tmp_path, capsys, monkeypatch):
    (tmp_path / "t.py").write_text(HAZARD)
    os.chmod(tmp_path, 0o555)
    try:
        code, _ = run(["t.py"], tmp_path, capsys, monkeypatch)
    finally:
        os.chmod(tmp_path, 0o755)
    assert code == 1


def test_sarif_fixes_carry_the_edits(tmp_path, capsys, monkeypatch):
    src = textwrap.dedent("""\
        import torch
        import habana_frameworks.torch.core as htcore


        def train(model, loader, optimizer):
            for data, target in loader:
                loss = model(data).sum()
                loss.backward()
                optimizer.step()
    """)
    (tmp_path / "g.py").write_text(src)
    _, cap = run(["--format", "sarif", "--no-cache", "g.py"], tmp_path, capsys, monkeypatch)
    (res,) = json.loads(cap.out)["runs"][0]["results"]
    (fix,) = res["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "g.py"
    text = src
    for rep in sorted(change["replacements"], key=lambda r: -r["deletedRegion"]["charOffset"]):
        start, length = rep["deletedRegion"]["charOffset"], rep["deletedRegion"]["charLength"]
        text = text[:start] + rep["insertedContent"]["text"] + text[start + length:]
    run(["--fix", "--no-cache", "g.py"], tmp_path, capsys, monkeypatch)
    assert text == (tmp_path / "g.py").read_text()


def test_editing_one_file_of_a_project_parses_only_what_changed(tmp_path, capsys, monkeypatch):
    """A warm run after an edit re-summarises the edited file only, and re-lints only the files
    whose questions to the project now get other answers."""
    import shutil

    import hpulint.engine as engine

    src = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "trainer"
    proj = tmp_path / "trainer"
    shutil.copytree(src, proj)
    code, first = run(["-j", "1", "--format", "json", "."], proj, capsys, monkeypatch)
    assert code == 1
    parsed = []
    real = engine.cst.parse_module
    monkeypatch.setattr(engine.cst, "parse_module", lambda text, *a, **k: (parsed.append(text), real(text, *a, **k))[1])
    # an edit that changes nothing the other files ask about
    net = proj / "models" / "net.py"
    net.write_text(net.read_text() + "\n\ndef unused():\n    return 1\n")
    code, second = run(["-j", "1", "--format", "json", "."], proj, capsys, monkeypatch)
    assert code == 1 and json.loads(second.out) == json.loads(first.out)
    assert len(parsed) == 1 and "def unused" in (parsed[0].decode() if isinstance(parsed[0], bytes) else parsed[0])
    # an edit that changes an answer: log_loss() is no longer called from the step loop
    parsed.clear()
    train = proj / "train.py"
    train.write_text(train.read_text().replace("        log_loss(loss, history)\n", ""))
    code, third = run(["-j", "1", "--format", "json", "."], proj, capsys, monkeypatch)
    found = {(f["path"].replace("\\", "/"), f["code"]) for f in json.loads(third.out)}
    assert ("utils/metrics.py", "HPU005") not in found and ("models/net.py", "HPU002") in found
    texts = [p.decode() if isinstance(p, bytes) else p for p in parsed]
    assert any("def log_loss" in t for t in texts)  # re-linted: its answers changed
    assert not any("class Net" in t for t in texts)  # unchanged answers: its cached result
