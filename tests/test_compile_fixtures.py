"""Every compile fixture (fixtures/HPU012 ... HPU017) run on real Dynamo (torch 2.13, CPU,
eager backend): the counts in its ``# replay compile:`` header, every expected finding of a bad
fixture confirmed, and no finding of the same rule confirmed anywhere in a look-alike."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from fixture_format import compile_fixtures  # noqa: E402
from hpulint.lazy.confirm import confirm  # noqa: E402
from hpulint.lazy.replay import replay  # noqa: E402

pytestmark = pytest.mark.slow

ALL = compile_fixtures()
RULES = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")
_RUNS = {}


def run(fx):
    if fx.id not in _RUNS:
        _RUNS[fx.id] = replay(str(fx.path), profile="compile")
    return _RUNS[fx.id]


def test_each_compile_rule_has_bad_and_good_fixtures():
    for code in RULES:
        names = [fx.path.name for fx in ALL if fx.path.parent.name == code]
        assert sum(n.startswith("bad_") for n in names) >= 2, code
        assert sum(n.startswith("good_") for n in names) >= 2, code
    for fx in ALL:
        assert set(fx.replay["compile"]) == {"compiles", "graph_breaks", "recompiles", "fallbacks"}


@pytest.mark.parametrize("fx", ALL, ids=[fx.id for fx in ALL])
def test_dynamo_counts_match_the_header(fx, capsys):
    result = run(fx)
    capsys.readouterr()
    assert result["status"] == "ok", result["error"]
    got = {key: result[key] for key in fx.replay["compile"]}
    assert got == fx.replay["compile"]


BAD = [fx for fx in ALL if fx.path.name.startswith("bad_")]
GOOD = [fx for fx in ALL if fx.path.name.startswith("good_")]


@pytest.mark.parametrize("fx", BAD, ids=[fx.id for fx in BAD])
def test_every_expected_finding_is_confirmed_by_dynamo(fx, capsys):
    findings = [{"code": code, "line": line} for code, line in fx.expect]
    assert findings and all(code == fx.path.parent.name for code, _ in fx.expect)
    results = confirm(findings, run(fx))
    capsys.readouterr()
    assert [(r["code"], r["line"], r["status"]) for r in results] == [
        (code, line, "confirmed") for code, line in fx.expect]


@pytest.mark.parametrize("fx", GOOD, ids=[fx.id for fx in GOOD])
def test_no_line_of_a_look_alike_is_confirmed(fx, capsys):
    code = fx.path.parent.name
    assert fx.expect == []
    n = len(fx.path.read_text().splitlines())
    results = confirm([{"code": code, "line": line} for line in range(1, n + 1)], run(fx))
    capsys.readouterr()
    assert [r["line"] for r in results if r["status"] == "confirmed"] == []


def test_the_fixes_deliver(capsys):
    by = {fx.id: run(fx) for fx in ALL}
    capsys.readouterr()
    # dynamic=False storm -> mark_dynamic: 8 graphs and an eager fallback -> 1 graph
    bad, good = by["HPU015/bad_dynamic_false_varying_length.py"], by["HPU015/good_mark_dynamic.py"]
    assert (bad["compiles"], bad["fallbacks"], good["compiles"], good["fallbacks"]) == (8, 1, 1, 0)
    # if on a tensor -> torch.where: a break and a graph per branch -> one graph
    bad, good = by["HPU013/bad_if_on_loss.py"], by["HPU013/good_where_instead_of_if.py"]
    assert (bad["graph_breaks"], good["graph_breaks"], good["compiles"]) == (1, 0, 1)
    # compiled instances per attribute value -> one compiled parent
    bad, good = by["HPU016/bad_blocks_with_int_depth.py"], by["HPU016/good_compile_the_parent.py"]
    assert (bad["recompiles"], good["recompiles"], good["compiles"]) == (7, 0, 1)
    # the fallback is the function the storm hit, called from the loop
    fall = [e for e in bad["events"] if e["kind"] == "fallback"]
    assert [(e["function"], e["limit"]) for e in fall] == [("forward", 8)]
