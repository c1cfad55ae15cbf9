"""confirm(findings, run_result) and the report, on hand-made replay results (no torch needed)."""
from __future__ import annotations

import json

from hpulint.lazy.confirm import confirm, loop_ranges, statement_ranges, unexplained
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


# -- HPU006-HPU010 ---------------------------------------------------------------------------------


def made_at(name, op, line, from_line, old, new, **extra):
    c = shape(name, op, line, old, new)
    c.update(from_file=SCRIPT, from_line=from_line, **extra)
    return c


def host_run(line, count, what="nonzero (runs on the host)"):
    return sync_event(line, count, what)


def test_hpu006_confirmed_by_a_shape_made_at_its_line():
    # nonzero at line 24 ran on the host; its output, used at line 30, changed shape
    events = [compile_event(i, 40, {"kind": "shape", "changes": [
        made_at("idx", "aten.index.Tensor", 30, 24, [i, 2], [i + 1, 2])]}) for i in range(1, 4)]
    run = result(events + [host_run(24, 10)], compiles=4, syncs=10, optimizer_steps=10)
    (r,) = confirm([finding("HPU006", 24)], run)
    assert r["status"] == "confirmed" and r["recompiles"] == 3 and r["host_runs"] == 10
    assert "3 recompilations caused by a shape made at this line (idx: (1, 2) -> (2, 2) ...)" in r["evidence"]
    # the line that only uses the shape is not the one that made it
    (r,) = confirm([finding("HPU006", 30)], run)
    assert r["status"] == "not reproduced"


def test_hpu006_confirmed_by_a_slice_bound_read_from_data():
    events = [compile_event(i, 40, {"kind": "constant", "changes": [
        constant("aten.slice.Tensor", 31, [1, 0, i], [1, 0, i + 1])]}) for i in range(1, 3)]
    (r,) = confirm([finding("HPU006", 31)], result(events, compiles=3))
    assert r["status"] == "confirmed" and "constant that changed at this line" in r["evidence"]


def test_hpu006_confirmed_by_a_host_run_every_step_even_when_the_shape_held():
    run = result([host_run(24, 10)], syncs=10, optimizer_steps=10)
    (r,) = confirm([finding("HPU006", 24)], run)
    assert r["status"] == "confirmed" and r["recompiles"] == 0
    assert r["evidence"] == "10 host runs (nonzero (runs on the host)) in 10 steps"
    # a host read that is not a data-dependent op does not count
    run = result([sync_event(24, 10, "item")], syncs=10, optimizer_steps=10)
    (r,) = confirm([finding("HPU006", 24)], run)
    assert r["status"] == "not reproduced" and r["host_runs"] == 0


def loader_change(name, old, new, loader_line=20):
    return made_at(name, "aten.addmm.default", 28, 26, old, new, loader_file=SCRIPT,
                   loader_line=loader_line)


def test_hpu007_confirmed_by_a_shorter_batch_of_that_dataloader():
    events = [compile_event(0, 26, {"kind": "first", "changes": []}, recompile=False),
              compile_event(5, 26, {"kind": "shape", "changes": [
                  loader_change("data", [4, 8], [2, 8]), loader_change("target", [4], [2])]})]
    run = result(events, compiles=2, mark_steps=14)
    (r,) = confirm([finding("HPU007", 20)], run)
    assert r["status"] == "confirmed" and r["recompiles"] == 1
    assert r["evidence"] == ("1 recompilation caused by a shorter batch of this DataLoader "
                             "(data: (4, 8) -> (2, 8))")
    assert confirm([finding("HPU007", 21)], run)[0]["status"] == "not reproduced"
    assert unexplained([finding("HPU007", 20)], run) == []


def test_hpu007_a_longer_or_reshaped_batch_is_not_a_short_last_batch():
    events = [compile_event(5, 26, {"kind": "shape", "changes": [
        loader_change("data", [2, 8], [4, 8]), loader_change("tokens", [4, 8], [4, 9])]})]
    (r,) = confirm([finding("HPU007", 20)], result(events, compiles=2))
    assert r["status"] == "not reproduced"


BRANCH = """\
import torch

for data in batches:
    tmp = module1(data)
    if tmp.mean() > 0:
        tmp = module2(tmp)
    else:
        tmp = module3(tmp)
    loss = tmp.mean()
    loss.backward()
    mark_step()
"""


def test_statement_ranges_map_a_test_line_to_its_statement():
    assert statement_ranges(BRANCH)[5] == (5, 8)
    assert statement_ranges("x = a if t.sum() > 0 else b\nassert t.all()\n") == {1: (1, 1), 2: (2, 2)}


def test_hpu008_confirmed_by_a_sync_every_step_and_counts_the_graphs_per_path():
    events = [compile_event(1, 11, {"kind": "first", "changes": []}, recompile=False),
              compile_event(4, 11, {"kind": "shape", "changes": [
                  shape("input 3", "aten.t.default", 8, [2, 8], [4, 8])]}),
              compile_event(5, 11, {"kind": "ops", "changes": [
                  {"kind": "ops", "index": 3, "old_op": "aten.addmm.default", "old_line": 6,
                   "new_op": "aten.mm.default", "new_line": 8, "file": SCRIPT, "line": 8}]}),
              compile_event(6, 11, {"kind": "shape", "changes": [
                  shape("data", "aten.addmm.default", 4, [5, 16], [3, 16])]}),
              sync_event(5, 10, "bool")]
    run = result(events, compiles=4, syncs=10, backward_passes=10, mark_steps=10)
    (r,) = confirm([finding("HPU008", 5)], run, BRANCH)
    assert r["status"] == "confirmed" and r["path_recompiles"] == 2
    assert r["evidence"] == ("10 host syncs (bool) in 10 steps; 3 graphs for the paths taken "
                             "(2 recompilations with other ops at lines 5-8)")
    # the paths are explained by the finding; the new batch shape (line 4) is not
    left = unexplained([finding("HPU008", 5)], run, BRANCH)
    assert [(u["kind"], u["count"]) for u in left] == [("recompile", 1)]


def test_hpu008_not_reproduced_without_a_sync_every_step():
    run = result([sync_event(5, 2, "bool")], syncs=2, backward_passes=10, mark_steps=10)
    (r,) = confirm([finding("HPU008", 5)], run, BRANCH)
    assert r["status"] == "not reproduced" and r["syncs"] == 2
    assert r["evidence"] == "2 host syncs at this line in 10 steps (every step needs 8)"


def test_hpu009_and_hpu010_are_not_checked_and_say_why():
    r9, r10 = confirm([finding("HPU009", 3), finding("HPU010", 4)], result([]))
    assert r9["status"] == r10["status"] == "not checked"
    assert "HPU Graphs are not simulated" in r9["evidence"]
    assert "torch.compile is not simulated" in r10["evidence"]


def test_unexplained_counts_host_runs_and_shapes_made_at_an_hpu006_line():
    events = [compile_event(1, 40, {"kind": "shape", "changes": [
        made_at("idx", "aten.index.Tensor", 30, 24, [3, 2], [5, 2])]}),
        host_run(24, 10), sync_event(24, 1, "item")]
    run = result(events, compiles=2, syncs=11)
    left = unexplained([finding("HPU006", 24)], run)
    assert left == [{"kind": "sync", "line": 24, "file": SCRIPT, "what": "item", "count": 1}]
