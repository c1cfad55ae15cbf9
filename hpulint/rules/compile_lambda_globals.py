"""A lambda made at module level in the loop and passed to a compiled callable, reading a global
int the loop changes, for HPU017.

Measured on torch 2.13 (CPU, ``eager`` backend; fixtures in fixtures/HPU017): Dynamo inlines the
lambda and guards on the globals it reads by value (``G['num_tokens'] == 91``), and a global is
never made dynamic, so each new value is a recompile: 6 updates with 6 token counts, 6 graphs and
5 recompiles; a lambda reading the loop's counter, 5 passes, 5 graphs. The same lambda made inside a function closes over a local (a closure cell, made
dynamic after one recompile: 2 graphs), and the count passed as an argument of the compiled function
is made dynamic too.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import descendants, loop_head, names_in, one_line
from hpulint.rules.compile_value_forms import _has_float
from hpulint.rules.compiled_region import MANY, distinct_values, recompiles_text

MESSAGE = (
    "`{lam}` passed to the compiled `{name}` reads the global `{arg}`, which changes ({how}): "
    "Dynamo inlines the lambda and guards on the globals it reads by value, and never makes a global dynamic, "
    "so {values}. Pass the count to the compiled function as an argument (an int argument is made dynamic "
    "after one recompile) or as a tensor, or make the lambda inside a function (a closure's int is made dynamic "
    "too)"
)
INT_CALLS = frozenset({"int", "len", "round", "sum", "max", "min"})


def lambda_global(rule, call: cst.Call, callee: str, loop, counters: dict) -> Optional[str]:
    """The message for a call, in a module-level loop, of the compiled ``callee`` given a lambda (written
    in the call, or assigned in the loop) whose body reads a loop counter, or a name the loop assigns an
    int (a count from `int(...)`/`len(...)`/`.item()`, or of the loop counters), or None."""
    if loop.scope.kind != "module":
        return None
    for a in call.args:
        lam = a.value
        if type(lam) is cst.Name:
            lam = rule.value_in_loop(lam.value, loop)
        if type(lam) is not cst.Lambda:
            continue
        params = {p.name.value for p in lam.params.params}
        for name in sorted(set(names_in(lam.body)) - params):
            value = rule.value_in_loop(name, loop)
            if name in counters and value is None:
                how = f"the counter of `{loop_head(getattr(counters[name], 'node', None), 60)}`"
            elif value is not None and _int_valued(value, counters):
                how = f"`{name} = {one_line(value, 60)}` in the loop"
            else:
                continue
            outer = _outer_for(loop)
            n = distinct_values(outer.iter) if outer is not None else None
            if n is not None and n < MANY:
                return None
            values = recompiles_text(n, rule.limit, unit="passes") if n is not None else (
                "each new value is a recompile, and after `recompile_limit` (8) it runs eagerly for the rest of "
                "the run (eager fallback)")
            return MESSAGE.format(lam=one_line(a.value, 60), name=callee, arg=name, how=how, values=values)
    return None


def _int_valued(value: cst.BaseExpression, counters: dict) -> bool:
    """An int that may differ each pass: made of the loop counters, or counted (`int(...)`,
    `len(...)`, `sum(...)`, `.item()`), with no float in it."""
    if _has_float(value) or type(value) in (cst.Integer, cst.Lambda):
        return False
    if set(names_in(value)) & set(counters):
        return True
    for n in descendants(value):
        if type(n) is cst.Call:
            f = n.func
            if (type(f) is cst.Name and f.value in INT_CALLS) or (type(f) is cst.Attribute and f.attr.value == "item"):
                return True
    return False


def _outer_for(loop):
    """The outermost `for` of the loop chain (the one whose passes change the value)."""
    out = None
    for lp in loop.chain():
        if type(getattr(lp, "node", None)) is cst.For:
            out = lp.node
    return out
