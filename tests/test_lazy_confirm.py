"""confirm(findings, run_result) and the report, on hand-made replay results (no torch needed)."""
from __future__ import annotations

import json

from hpulint.lazy.confirm import confirm, loop_ranges, unexplained
from hpulint.lazy.report import as_json, format_text, too_frequent
from hpulint.model import Finding

SCRIPT = "/work/train.py"


def finding(code, line):
    return Finding(code=code, name="", message="", path=SCRIPT, line=line, col=1, end_line=line,
                   end_col=1)


def compile_event(step, line, cause, recompile=True, site="mark_step"):
    return {"kind": "compile", "n": step + 1, "recompile": recompile, "site": site,
            "file": SCRIPT, "line": line, "step": step, "nodes": 10, "cause": cause}


def constant(op, line, old, new):
    return {"kind": "constant", "op": op, "file": SCRIPT, "line": line, "old": old, "new": new}


def shape(name, op, line, old, new):
    return {"kind": "shape", "input": name, "op": op, "file": SCRIPT, "line": line,
            "old": old, "new": new, "what": "shape"}


def sync_event(line, count, what="item"):
    return {"kind": "sync", "what": what, "file": SCRIPT, "line": line, "count": count,
            "steps": list(range(count)), "first_step": 0}


def result(events, *, compiles=0, syncs=0, mark_steps=10, **extra):
    r = {"script": SCRIPT, "profile": "hpu", "engine": "sim", "status": "ok",
         "compiles": compiles, "cached": 0, "syncs": syncs, "mark_steps": mark_steps,
         "max_graph_nodes": 10, "events": events, "pending_at_exit": None, "wall_time": 0.1}
    r.update(extra)
    return r


def select_recompiles(line, n):
    return [compile_event(0, 20, {"kind": "first", "changes": []}, recompile=False)] + [
        compile_event(i, 20, {"kind": "constant", "changes": [
            constant("aten.select.int", line, i + 3, i + 4)], "summary": "..."})
        for i in range(1, n + 1)]


def test_hpu001_confirmed_by_constant_recompiles_at_its_line():
    run = result(select_recompiles(12, 9), compiles=10)
    (r,) = confirm([finding("HPU001", 12)], run)
    assert r["status"] == "confirmed" and r["recompiles"] == 9
    assert "select.int: 4 -> 5 ... 12 -> 13" in r["evidence"]


def test_hpu001_at_another_line_is_not_reproduced():
    run = result(select_recompiles(12, 9), compiles=10)
    (r,) = confirm([finding("HPU001", 13)], run)
    assert r["status"] == "not reproduced" and r["recompiles"] == 0


def test_hpu001_not_reproduced_when_the_recompile_is_in_another_file():
    events = select_recompiles(12, 3)
    for e in events[1:]:
        e["cause"]["changes"][0]["file"] = "/elsewhere/model.py"
    (r,) = confirm([finding("HPU001", 12)], result(events, compiles=4))
    assert r["status"] == "not reproduced"


def test_hpu003_needs_a_shape_growing_in_at_least_two_recompiles():
    events = [compile_event(i, 30, {"kind": "shape", "changes": [
        shape("acc", "aten.cat.default", 27, [2 * i, 4], [2 * i + 2, 4])]}) for i in range(1, 4)]
    (r,) = confirm([finding("HPU003", 27)], result(events, compiles=4))
    assert r["status"] == "confirmed" and r["recompiles"] == 3
    assert "acc" in r["evidence"]
    (r,) = confirm([finding("HPU003", 27)], result(events[:1], compiles=2))
    assert r["status"] == "not reproduced"


def test_syncs_confirmed_only_when_they_happen_about_every_step():
    run = result([sync_event(30, 10)], syncs=10, mark_steps=20, optimizer_steps=10)
    assert confirm([finding("HPU005", 30)], run)[0]["status"] == "confirmed"
    assert confirm([finding("HPU002", 30)], run)[0]["status"] == "confirmed"
    # once per logging interval is not every step
    run = result([sync_event(30, 1)], syncs=1, mark_steps=20, optimizer_steps=10)
    (r,) = confirm([finding("HPU005", 30)], run)
    assert r["status"] == "not reproduced" and r["syncs"] == 1 and r["steps"] == 10
    # steps fall back to step markers when nothing trains
    run = result([sync_event(30, 7)], syncs=7, mark_steps=12)
    assert confirm([finding("HPU005", 30)], run)[0]["status"] == "not reproduced"
    run = result([sync_event(30, 10)], syncs=10, mark_steps=12)
    assert confirm([finding("HPU005", 30)], run)[0]["status"] == "confirmed"


SOURCE = """\
import torch

def train(model, opt, data):
    for x, y in data:
        loss = model(x).sum()
        loss.backward()
        opt.step()

for epoch in range(3):
    train(model, opt, data)
"""


def test_loop_ranges_come_from_the_source():
    assert loop_ranges(SOURCE) == [(4, 7), (9, 10)]
    assert loop_ranges("def broken(:\n") == []


def growth(lines, stack=None):
    return {"kind": "growth", "step": 0, "file": None, "line": None, "compiled": False,
            "backward_passes": 10, "optimizer_steps": 10, "lines": lines, "files": [SCRIPT],
            "stack": stack or [[SCRIPT, x] for x in lines], "nodes": 290,
            "closed_by": "end of script"}


def test_hpu004_confirmed_by_growth_inside_the_loop():
    run = result([growth([6, 7])], mark_steps=0)
    (r,) = confirm([finding("HPU004", 4)], run, SOURCE)
    assert r["status"] == "confirmed" and r["loop"] == [4, 7]
    assert "10 optimizer steps" in r["evidence"]


def test_hpu004_through_a_helper_called_from_the_loop():
    # backward/step happen in train() (lines 6-7); the flagged loop is the epoch loop (9-10)
    run = result([growth([6, 7], stack=[[SCRIPT, 6], [SCRIPT, 7], [SCRIPT, 10]])], mark_steps=0)
    (r,) = confirm([finding("HPU004", 9)], run, SOURCE)
    assert r["status"] == "confirmed"


def test_hpu004_not_reproduced_without_growth_or_loop():
    (r,) = confirm([finding("HPU004", 4)], result([], mark_steps=20), SOURCE)
    assert r["status"] == "not reproduced"
    (r,) = confirm([finding("HPU004", 1)], result([growth([6])]), SOURCE)
    assert r["status"] == "not reproduced" and r["evidence"] == "no loop at this line"


def test_unknown_codes_are_not_checked():
    (r,) = confirm([finding("HPU011", 3)], result([]))
    assert r["status"] == "not checked"


def test_unexplained_lists_recompiles_and_syncs_no_finding_accounts_for():
    events = select_recompiles(12, 4) + [sync_event(30, 10), sync_event(40, 1, "print")]
    run = result(events, compiles=5, syncs=11)
    left = unexplained([finding("HPU001", 12), finding("HPU005", 30)], run)
    assert left == [{"kind": "sync", "line": 40, "file": SCRIPT, "what": "print", "count": 1}]
    left = unexplained([], run)
    kinds = sorted((u["kind"], u["line"], u["count"]) for u in left)
    assert kinds == [("recompile", 20, 4), ("sync", 30, 10), ("sync", 40, 1)]


def test_too_frequent_uses_pytorch_xla_thresholds():
    # torch_xla: CompileTime after a warm-up of 10 steps, more than 0.5 per step
    assert too_frequent({"compiles": 10, "mark_steps": 10, "syncs": 0}) == []
    assert too_frequent({"compiles": 11, "mark_steps": 12, "syncs": 0}) == [
        "pt-xla-profiler: CompileTime too frequent: 11 counts during 12 steps"]
    assert too_frequent({"compiles": 6, "mark_steps": 12, "syncs": 0}) == []
    assert too_frequent({"compiles": 1, "mark_steps": 20, "syncs": 11}) == [
        "pt-xla-profiler: TransferFromServerTime too frequent: 11 counts during 20 steps"]


def test_json_report_has_the_documented_keys():
    run = result(select_recompiles(12, 2), compiles=3)
    findings = confirm([finding("HPU001", 12)], run)
    data = json.loads(json.dumps(as_json(run, findings, unexplained([finding("HPU001", 12)], run))))
    assert {"profile", "compiles", "cached", "syncs", "mark_steps", "max_graph_nodes", "events",
            "findings"} <= set(data)
    assert data["findings"][0]["code"] == "HPU001"
    assert data["findings"][0]["line"] == 12
    assert data["findings"][0]["status"] == "confirmed"


def test_text_report_groups_recompiles_and_shows_each_finding():
    run = result(select_recompiles(12, 9) + [sync_event(30, 10)], compiles=10, syncs=10,
                 mark_steps=12)
    findings = confirm([finding("HPU001", 12), finding("HPU005", 31)], run)
    text = format_text(run, findings, unexplained([finding("HPU001", 12)], run))
    assert "compilations       10" in text
    assert "9 x at mark_step at line 20: constant changed: select.int at line 12: 4 -> 5 ... 12 -> 13" in text
    assert "10 x item at line 30" in text
    assert "HPU001 line 12: confirmed" in text
    assert "HPU005 line 31: not reproduced" in text
    assert "10 x host sync (item) at line 30" in text
    assert "pt-xla-profiler: CompileTime too frequent: 10 counts during 12 steps" in text
