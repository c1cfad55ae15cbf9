"""The compile profile's confirmation rules on hand-made runs (no torch needed)."""
from __future__ import annotations

from hpulint.lazy.compile_confirm import confirm, guard_kind, unexplained
from hpulint.lazy.report import format_text

SCRIPT = "/work/project/train.py"
SOURCE = "\n".join([
    "import torch",                     # 1
    "@torch.compile",                   # 2
    "def f(x, tag):",                   # 3
    "    if (x.sum() > 0 and",          # 4
    "            x.max() < 3):",        # 5
    "        x = x + 1",                # 6
    "    return x * len(tag)",          # 7
    "for i in range(12):",              # 8
    "    f(torch.randn(3), str(i))",    # 9
]) + "\n"


def recompile(entry, guard, line=7, call=9):
    return {"kind": "recompile", "function": "f", "file": SCRIPT, "def_line": 3, "line": call,
            "call_file": SCRIPT, "compiled_at": [SCRIPT, 2],
            "guard_failures": [{"entry": entry, "guard": guard, "file": SCRIPT, "line": line}]}


def run(*events, **counts):
    base = {"profile": "compile", "script": SCRIPT, "status": "ok", "compiles": 1,
            "graph_breaks": 0, "recompiles": 0, "fallbacks": 0, "events": list(events)}
    base.update(counts)
    return base


def statuses(findings, result):
    return [(r["code"], r["line"], r["status"]) for r in confirm(findings, result, SOURCE)]


def test_guard_kinds():
    assert guard_kind("tensor 'x' size mismatch at index 0. expected 2, actual 3") == "shape"
    assert guard_kind("tensor 'x' requires_grad mismatch. expected requires_grad=0") == "grad"
    assert guard_kind("self.k == 2") == "attribute"
    assert guard_kind("tag == 'step-001'") == "value"
    assert guard_kind("len(xs) == 4") == "value"
    assert guard_kind("G['STEP'] == 3") == "value"


def test_one_recompile_is_automatic_dynamic_not_a_storm():
    one = run(recompile("0/0", "n == 2"))
    two = run(recompile("0/0", "tag == '0'"), recompile("0/1", "tag == '1'"))
    finding = [{"code": "HPU017", "line": 9}]
    assert statuses(finding, one) == [("HPU017", 9, "not reproduced")]
    assert statuses(finding, two) == [("HPU017", 9, "confirmed")]
    # tied through the guard's own line and the compile call too; not through an unrelated line
    assert statuses([{"code": "HPU017", "line": 7}, {"code": "HPU017", "line": 2},
                     {"code": "HPU017", "line": 6}], two) == [
        ("HPU017", 7, "confirmed"), ("HPU017", 2, "confirmed"), ("HPU017", 6, "not reproduced")]
    # a value storm is not a shape or attribute finding
    assert statuses([{"code": "HPU015", "line": 9}, {"code": "HPU016", "line": 9}], two) == [
        ("HPU015", 9, "not reproduced"), ("HPU016", 9, "not reproduced")]


def test_a_fallback_alone_confirms():
    fallback = {"kind": "fallback", "function": "f", "file": SCRIPT, "def_line": 3, "line": 9,
                "call_file": SCRIPT, "limit": 1, "limit_name": "recompile_limit",
                "compiled_at": [SCRIPT, 2],
                "last_reason": {"entry": "0/0", "guard": "tensor 'x' size mismatch at index 0. "
                                                         "expected 2, actual 3"}}
    assert statuses([{"code": "HPU015", "line": 2}], run(fallback, fallbacks=1)) == [
        ("HPU015", 2, "confirmed")]


def test_breaks_confirm_at_their_line_and_a_multiline_test():
    br = {"kind": "graph_break", "file": SCRIPT, "line": 5, "reason": "Data-dependent branching",
          "count": 2}
    result = run(br, graph_breaks=2)
    got = confirm([{"code": "HPU013", "line": 4}, {"code": "HPU012", "line": 4},
                   {"code": "HPU012", "line": 5}, {"code": "HPU005", "line": 5}], result, SOURCE)
    assert [(r["line"], r["status"]) for r in got] == [
        (4, "confirmed"), (4, "not reproduced"), (5, "confirmed"), (5, "not checked")]
    assert got[0]["evidence"] == "2 graph breaks at this line (Data-dependent branching)"


def test_unexplained_groups_what_no_finding_covers():
    br = {"kind": "graph_break", "file": SCRIPT, "line": 5, "reason": "Data-dependent branching",
          "count": 1}
    result = run(br, recompile("0/0", "tag == '0'"), recompile("0/1", "tag == '1'"))
    left = unexplained([], result, SOURCE)
    assert [(u["kind"], u["line"], u["count"]) for u in left] == [
        ("graph_break", 5, 1), ("recompile", 3, 2)]
    assert unexplained([{"code": "HPU013", "line": 5}, {"code": "HPU017", "line": 9}],
                       result, SOURCE) == []


def test_text_report_of_a_storm():
    result = run(recompile("0/0", "tag == '0'"), recompile("0/1", "tag == '1'"),
                 compiles=3, recompiles=2, torch="2.13.0", backend="eager", wall_time=1.0)
    text = format_text(result, confirm([{"code": "HPU017", "line": 9}], result, SOURCE),
                       unexplained([{"code": "HPU017", "line": 9}], result, SOURCE))
    assert "    2 x f (line 3) called at line 9: guard failed: tag == '0' ... tag == '1' (line 7)" in text
    assert "  HPU017 line 9: confirmed: 2 recompilations (tag == '0' ... tag == '1')" in text
    assert "not explained by any finding: nothing" in text
    assert text.rstrip().endswith("summary: 3 graphs, 0 graph breaks, 2 recompilations and 0 eager fallbacks")


def test_requires_grad_and_object_attribute_storms_are_hpu016():
    grad = run(recompile("0/0", "tensor 'fn._modules['0']._parameters['bias']' requires_grad mismatch. "
                                "expected requires_grad=0", line=None),
               recompile("0/1", "tensor 'fn._modules['1']._parameters['bias']' requires_grad mismatch. "
                                "expected requires_grad=0", line=None))
    # tied through the call of the compiled function (the guard names no line)
    assert statuses([{"code": "HPU016", "line": 9}, {"code": "HPU017", "line": 9}], grad) == [
        ("HPU016", 9, "confirmed"), ("HPU017", 9, "not reproduced")]
    bumped = run(recompile("0/0", "G['counter'].n == 0"), recompile("0/1", "G['counter'].n == 1"))
    # an object's attribute is a value guard (HPU017: an int kept in an object) and HPU016's too
    assert statuses([{"code": "HPU016", "line": 7}, {"code": "HPU017", "line": 7},
                     {"code": "HPU015", "line": 7}], bumped) == [
        ("HPU016", 7, "confirmed"), ("HPU017", 7, "confirmed"), ("HPU015", 7, "not reproduced")]
    assert unexplained([{"code": "HPU016", "line": 9}], grad) == []
    # a global's own value is not an attribute: not HPU016's
    glob = run(recompile("0/0", "G['STEP'] == 0"), recompile("0/1", "G['STEP'] == 1"))
    assert statuses([{"code": "HPU016", "line": 7}], glob) == [("HPU016", 7, "not reproduced")]


def test_rank_and_dtype_guards_are_hpu015s():
    from hpulint.lazy.compile_confirm import codes_for

    assert codes_for("tensor 'images' rank mismatch. expected 3, actual 4") == ("HPU015",)
    assert codes_for("tensor 'x' dtype mismatch. expected Byte, actual Half") == ("HPU015",)
    assert codes_for("tensor 'x' requires_grad mismatch. expected requires_grad=0") == ("HPU016",)


def test_stride_guards_are_hpu015s():
    """Inputs of several memory layouts: "stride mismatch", and the stride guard Dynamo could not run
    on a later layout (logged as "'NoneType' object has no attribute 'stride'", measured on 2.13)."""
    from hpulint.lazy.compile_confirm import codes_for

    assert codes_for("tensor 'images' stride mismatch at index 0. expected 768, actual 1200") == ("HPU015",)
    assert codes_for("'NoneType' object has no attribute 'stride'") == ("HPU015",)
    assert codes_for("autocast(cpu)_dtype") == ("HPU017",)
