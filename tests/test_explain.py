"""`hpulint explain LOG...`: every event in real logs mapped to its rule, its source line and the
static finding that covers it (or not); the output formats; logs with no events; bad logs."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path


from hpulint.cli import main
from hpulint.explain import explain_logs

LOGS = Path(__file__).resolve().parent / "data" / "logs"
DYNAMO = LOGS / "dynamo"
XLA = LOGS / "pytorch-xla"


def run(args, cwd: Path, capsys, monkeypatch):
    monkeypatch.chdir(cwd)
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def summary(log: Path, roots=()) -> list:
    reports, errors = explain_logs([str(log)], roots=roots)
    assert errors == []
    return [(e.kind, e.rule, f"{Path(e.file).name}:{e.line}" if e.file else None, e.count, e.coverage)
            for e in reports[0].events]


# --- real Dynamo logs (torch 2.13, CPU) --------------------------------------------------------


def test_dynamo_recompiles_log():
    assert summary(DYNAMO / "recompiles.log") == [
        ("recompilation", "HPU011", "recompiles.py:10", 1, "not covered"),  # step == 0: x * step
        ("recompilation", "HPU007", "recompiles.py:13", 1, "not covered"),  # expected 4, actual 2
    ]


def test_dynamo_graph_breaks_log_each_break_is_a_static_finding():
    assert summary(DYNAMO / "graph_breaks.log") == [
        ("graph break", "HPU012", "graph_breaks.py:15", 1, "covered"),  # .item()
        ("graph break", "HPU013", "graph_breaks.py:16", 2, "covered"),  # if h.mean() > 0 (and its duplicate)
        ("graph break", "HPU014", "graph_breaks.py:18", 1, "covered"),  # h[h > 0]
    ]


def test_dynamo_recompile_limit_log_finds_what_the_linter_misses():
    assert summary(DYNAMO / "recompile_limit.log") == [
        ("recompilation", "HPU001", "recompile_limit.py:15", 4, "not covered"),  # steps[i], i == 0 ... 3
        ("recompile limit", "HPU001", "recompile_limit.py:15", 1, "not covered"),
        ("graph break", "HPU012", "recompile_limit.py:23", 1, "covered"),  # backward() in compiled code
        ("graph break", "HPU012", "recompile_limit.py:24", 1, "covered"),  # loss.item()
        ("graph break", "HPU012", "recompile_limit.py:24", 2, "covered"),  # print() of it
        ("recompilation", "HPU012", "recompile_limit.py:24", 1, "covered"),  # ___stack2 == 0.467...
    ]


# --- real PyTorch/XLA logs (torch_xla 2.9.0, PJRT_DEVICE=CPU) -----------------------------------


def test_xla_host_reads_log_each_read_at_its_line():
    assert summary(XLA / "host_reads.log") == [
        ("host sync", "HPU008", "host_reads.py:22", 3, "covered"),  # if loss > 10: every step
        ("host sync", "HPU005", "host_reads.py:24", 3, "covered"),  # print(loss.item()) before the sync
    ]


def test_xla_profiler_log_counts_each_read_for_the_whole_run():
    # PT_XLA_DEBUG=1 PT_XLA_DEBUG_LEVEL=1: one compilation analysis per read, then the summary's counts
    assert summary(XLA / "host_reads_profiler.log") == [
        ("too frequent", "HPU005", None, 3, "no line in the log"),  # TransferFromDeviceTime, steps 1-3
        ("host sync", "HPU008", "host_reads.py:22", 3, "covered"),
        ("host sync", "HPU005", "host_reads.py:24", 3, "covered"),
    ]


def test_xla_loop_index_log_recompiles_at_the_marker_because_of_steps_i():
    reports, _ = explain_logs([str(XLA / "loop_index.log")])
    first, second = reports[0].events
    assert (first.kind, first.rule, Path(first.file).name, first.line, first.count, first.coverage) == (
        "recompilation", "HPU001", "loop_index.py", 20, 11, "covered")  # xm.mark_step(); steps[i] at 18
    assert first.static == [("HPU001", 18, 13)]
    # pt-xla-profiler said it after steps 11 and 12; the metrics report agrees (not counted twice)
    assert (second.kind, second.rule, second.text, second.last_text, second.count, second.coverage) == (
        "too frequent", None, "CompileTime too frequent: 11 counts during 11 steps",
        "CompileTime too frequent: 12 counts during 12 steps", 2, "no line in the log")
    assert reports[0].notes == ["12 compilations and 0 executions analysed",
                                "metrics report: 12 compilations, 0 transfers to the host, 12 step markers"]


def test_xla_clean_log_has_no_events():
    reports, _ = explain_logs([str(XLA / "clean.log")])
    assert reports[0].formats == ["PyTorch/XLA"] and reports[0].events == []
    assert reports[0].notes == ["1 compilation and 0 executions analysed"]


def test_text_output(capsys, monkeypatch):
    code, out, err = run(["explain", "tests/data/logs/dynamo/recompile_limit.log"], LOGS.parent.parent.parent,
                         capsys, monkeypatch)
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[0] == "tests/data/logs/dynamo/recompile_limit.log (Dynamo (TORCH_LOGS)): 6 events"
    assert lines[1:7] == [
        "  tests/data/logs/dynamo/recompile_limit.py:15: HPU001 4 x recompilation of sample_step: guard failed: "
        "i == 0 ... i == 3",
        "      | t = steps[i]",
        "    why: the loop counter `i` indexes a tensor: each value is another graph",
        "    fix: keep the loop counter out of the graph: index with a device tensor, or read a fixed position "
        "and torch.roll the buffer each step (`hpulint --fix --unsafe-fixes` rewrites steps[i])",
        "    static: not covered: no static HPU001 finding here: the log shows what `hpulint check` misses",
        "    log: tests/data/logs/dynamo/recompile_limit.log:3",
    ]
    assert lines[-1] == ("Found 6 events in 1 log: 6 explained by a rule, 4 covered by a static finding, "
                         "2 with a rule that `hpulint check` did not report there.")


def test_json_sarif_and_github(capsys, monkeypatch):
    root = LOGS.parent.parent.parent
    log = "tests/data/logs/dynamo/graph_breaks.log"
    _, out, _ = run(["explain", "--format", "json", log], root, capsys, monkeypatch)
    data = json.loads(out)
    assert [(e["rule"], e["path"], e["line"], e["count"], e["coverage"]) for e in data] == [
        ("HPU012", "tests/data/logs/dynamo/graph_breaks.py", 15, 1, "covered"),
        ("HPU013", "tests/data/logs/dynamo/graph_breaks.py", 16, 2, "covered"),
        ("HPU014", "tests/data/logs/dynamo/graph_breaks.py", 18, 1, "covered"),
    ]
    assert data[0]["static"] == [{"code": "HPU012", "line": 15, "col": 17}]
    assert data[0]["log"] == log and data[0]["log_line"] == 15
    _, out, _ = run(["explain", "--format", "sarif", log], root, capsys, monkeypatch)
    run0 = json.loads(out)["runs"][0]
    res = run0["results"][1]
    assert res["ruleId"] == "HPU013"
    assert res["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "tests/data/logs/dynamo/graph_breaks.py"}, "region": {"startLine": 16}}
    assert run0["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == "HPU013"
    _, out, _ = run(["explain", "--format", "github", log], root, capsys, monkeypatch)
    first = out.splitlines()[0]
    assert first.startswith("::warning file=tests/data/logs/dynamo/graph_breaks.py,line=15,"
                            "title=hpulint explain%3A HPU012 graph break::graph break: Unsupported Tensor.item()")


def test_a_log_with_no_events_says_so(capsys, monkeypatch, tmp_path):
    code, out, _ = run(["explain", DYNAMO / "clean.log"], tmp_path, capsys, monkeypatch)
    assert code == 0
    assert out.splitlines() == [f"{DYNAMO / 'clean.log'} (Dynamo (TORCH_LOGS)): no events",
                                "No events: nothing recompiled, broke the graph or read the device in these logs."]
    (tmp_path / "empty.log").write_text("")
    code, out, _ = run(["explain", "empty.log"], tmp_path, capsys, monkeypatch)
    assert code == 0 and out.startswith("empty.log (no known format): no events (the log is empty)\n")


def test_unknown_and_missing_logs_are_clear_errors(capsys, monkeypatch, tmp_path):
    (tmp_path / "notes.txt").write_text("epoch 1 loss 0.5\nepoch 2 loss 0.4\n")
    code, out, err = run(["explain", "notes.txt", "nope.log", DYNAMO / "recompiles.log"], tmp_path,
                         capsys, monkeypatch)
    assert code == 2
    assert err.splitlines()[0].startswith("hpulint: error: notes.txt: not a log hpulint can read (expected "
                                          "Dynamo's TORCH_LOGS=recompiles,graph_breaks output")
    assert err.splitlines()[1] == "hpulint: error: nope.log: cannot read: No such file or directory"
    assert "recompiles.log (Dynamo (TORCH_LOGS)): 2 events" in out  # the other logs are still read


def test_sources_are_found_by_root_when_the_log_travels(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "ci" / "graph_breaks.log"
    log.parent.mkdir()
    text = (DYNAMO / "graph_breaks.log").read_text()
    old_root = text.split('File "', 1)[1].split("tests/data/logs/dynamo/")[0]  # where it was written
    log.write_text(text.replace(old_root, "/nonexistent/home/me/proj/"))
    assert {c for *_, c in summary(log)} == {"no source"}
    src = tmp_path / "checkout" / "tests" / "data" / "logs" / "dynamo"
    src.mkdir(parents=True)
    shutil.copy(DYNAMO / "graph_breaks.py", src)
    assert [s[2] for s in summary(log, roots=[tmp_path / "checkout"])] == [
        "graph_breaks.py:15", "graph_breaks.py:16", "graph_breaks.py:18"]


def test_no_lint_still_maps_rules(capsys, monkeypatch):
    code, out, _ = run(["explain", "--no-lint", "--format", "json", DYNAMO / "recompiles.log"],
                       LOGS, capsys, monkeypatch)
    assert [(e["rule"], e["coverage"]) for e in json.loads(out)] == [("HPU011", None), ("HPU007", None)]


def test_explain_never_imports_torch():
    import subprocess

    code = ("import sys; from hpulint.cli import main; main(['explain', '--format', 'json', "
            f"{str(DYNAMO / 'graph_breaks.log')!r}]); assert 'torch' not in sys.modules")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
