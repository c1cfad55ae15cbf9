"""A list of new strings given to a compiled function every pass, for HPU017.

A loop that hands the compiled function a list of strings built from its counter (sample ids,
``[f"img_{4 * i + j:05d}" for j in range(4)]``), directly or as an entry of a dict it builds
(``batch = {"pixels": ..., "ids": [...]}``), where the function reads the strings' values: it
iterates them (``zip(batch["ids"], losses)``, ``for name in ids``, a comprehension) or indexes the
list. Dynamo guards on each string by value (``batch['ids'][0] == 'sample_28'``; strings are never
made dynamic), so each pass compiles again, and after ``recompile_limit`` the function runs
eagerly. Measured on torch 2.13 (CPU, ``eager`` backend): ten batches whose ids are returned as
``dict(zip(batch["ids"], per_sample))``, 8 graphs, 7 recompiles and an eager fallback (the same with
a list argument and a dict comprehension); the same batches with the dict built by the caller from
the returned losses, or with only ``len(batch["ids"])`` read, 1 graph.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import bound_arguments, child_nodes, code, short
from hpulint.rules.compile_value_forms import _string_of
from hpulint.rules.compiled_region import MANY, counter_values, recompiles_text

ITERATING = frozenset({"zip", "enumerate", "reversed"})

MESSAGE = (
    "{said} is a list of strings made from the loop's counter ({how}), and the compiled `{name}` reads "
    "them ({use}): Dynamo guards on each string by value (strings are never made dynamic), so every "
    "pass compiles the function again, {values}. {fix}"
)
FIX = ("Keep the strings out of the compiled function: return the per-sample values as a tensor and pair "
       "them with the ids in the eager code around it (or pass integer ids as a tensor)")


def string_list_argument(rule, call: cst.Call, callee: str, loop, counters: dict, fn, skip: int) -> Optional[str]:
    """The message for a call in ``loop`` of the compiled ``callee`` (running ``fn``, whose first
    ``skip`` parameters are not passed) given a list of strings the loop makes anew from its
    counter, whose items ``fn`` reads; or None."""
    if fn is None:
        return None
    params = [p.name.value for p in fn.params.params][skip:]
    for param, value in bound_arguments(call, params) or ():
        if param is None:
            continue
        for key, listed in _string_lists(rule, value, loop, counters):
            use = _items_read(fn, param, key)
            if use is None:
                continue
            used = rule.counters_of(listed, loop, counters)
            n = counter_values(counters, used)
            if n is None and not rule.unbounded(used, counters):
                continue
            if n is not None and n < MANY:
                continue
            said = f"`{param}[{key!r}]`" if key is not None else f"`{param}`"
            values = recompiles_text(n, rule.limit, "passes") if n is not None else (
                f"a new list each pass: a recompile for each one until `recompile_limit` ({rule.limit}), then "
                "Dynamo runs it eagerly for the rest of the run (eager fallback)")
            return MESSAGE.format(said=said, how=f"`{short(listed, 60)}`", name=callee, use=f"`{use}`",
                                  values=values, fix=FIX)
    return None


def _string_lists(rule, expr: cst.BaseExpression, loop, counters: dict) -> list:
    """(dict key or None, list expression) for the lists of counter-made strings ``expr`` is (a
    name assigned in the loop, followed) or holds as a literal dict's entry."""
    value = expr
    if type(expr) is cst.Name:
        value = rule.value_in_loop(expr.value, loop)
        if value is None:
            return []
    out = []
    if _strings_of(value, counters):
        out.append((None, value))
    elif type(value) is cst.Dict:
        for el in value.elements:
            if type(el) is not cst.DictElement or type(el.key) is not cst.SimpleString:
                continue
            entry = el.value
            if type(entry) is cst.Name:
                entry = rule.value_in_loop(entry.value, loop)
            if entry is not None and _strings_of(entry, counters):
                out.append((el.key.evaluated_value, entry))
    return out


def _strings_of(expr: cst.BaseExpression, counters: dict) -> bool:
    """A list literal or comprehension of strings built from a loop counter."""
    if type(expr) is cst.ListComp:
        return _string_of(expr.elt, counters)
    if type(expr) is cst.List and expr.elements:
        return all(type(el) is cst.Element for el in expr.elements) and \
            any(_string_of(el.value, counters) for el in expr.elements)
    return False


def _is_target(node: cst.BaseExpression, param: str, key: Optional[str]) -> bool:
    if key is None:
        return type(node) is cst.Name and node.value == param
    return type(node) is cst.Subscript and type(node.value) is cst.Name and node.value.value == param \
        and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index \
        and type(node.slice[0].slice.value) is cst.SimpleString \
        and node.slice[0].slice.value.evaluated_value == key


def _items_read(fn: cst.FunctionDef, param: str, key: Optional[str]) -> Optional[str]:
    """The text of a use in ``fn`` that reads the items of the list (``param`` or
    ``param[key]``): a `for`/comprehension over it (or over `zip`/`enumerate`/`reversed` of it),
    such a call anywhere, or an index into it; else None. The length alone is not a read."""
    stack = list(child_nodes(fn.body))
    while stack:
        n = stack.pop()
        if type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(n) in (cst.For, cst.CompFor) and _is_target(n.iter, param, key):
            return f"for ... in {code(n.iter)}"
        if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value in ITERATING \
                and any(_is_target(a.value, param, key) for a in n.args):
            return code(n) if len(code(n)) <= 60 else f"{n.func.value}(...)"
        if type(n) is cst.Subscript and _is_target(n.value, param, key):
            return code(n)
        stack += list(child_nodes(n))
    return None

