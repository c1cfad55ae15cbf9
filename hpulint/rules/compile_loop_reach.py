"""The calls a `for` loop makes on every pass, directly or through a function of the file it
calls, for the recompile rules (compile_pruning, compile_global_state): what changes the state a
compiled callable is guarded on between its calls."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import child_nodes, code, descendants, names_in

SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def for_loops(an) -> list:
    """Every `for` statement of the file, in source order (the loops the analysis walked)."""
    return [lp.node for lp in an.all_loops if type(lp.node) is cst.For]


RESET = "torch._dynamo.reset"


def resets_dynamo(an, reached: list) -> bool:
    """A pass that calls `torch._dynamo.reset()` starts every compiled function afresh: what it
    changes is never a recompile."""
    return any((an.qualname(c.func) or "") == RESET for c, _, _ in reached)


def repeated_loops(an, module: cst.Module):
    """(loop, its number of distinct values or None, reached calls) for each `for` loop of the file
    whose passes may be 3 or more (`compiled_region.MANY`: not a literal of fewer values) and that
    does not reset Dynamo."""
    from hpulint.rules.compiled_region import MANY, distinct_values

    for loop in for_loops(an):
        n = distinct_values(loop.iter)
        if n is not None and n < MANY:
            continue
        reached = reached_calls(module, loop)
        if not resets_dynamo(an, reached):
            yield loop, n, reached


def body_calls(node: cst.CSTNode) -> list:
    """The calls under ``node``, in source order, not inside a nested def, class or lambda."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Call:
            out.append(n)
        stack += [c for c in reversed(child_nodes(n)) if type(c) not in SCOPES]
    return out


def reached_calls(module: cst.Module, loop: cst.For) -> list:
    """(call, bindings, scope) for each call the loop's body makes, and each call made by a
    module-level function the body calls (``bindings``: that function's parameters -> the
    caller's argument expressions; ``scope``: the node whose `for` loops bind names in the call)."""
    defs = {st.name.value: st for st in module.body if type(st) is cst.FunctionDef}
    out = []
    for call in body_calls(loop.body):
        out.append((call, {}, loop))
        fn = defs.get(call.func.value) if type(call.func) is cst.Name else None
        if fn is None:
            continue
        bind = _bind(fn, call)
        out += [(inner, bind, fn) for inner in body_calls(fn.body)]
    return out


def roots(expr: cst.BaseExpression, bind: dict, scope: cst.CSTNode) -> set:
    """The names an expression is made of, with a name bound by a `for` of ``scope`` replaced by
    the names of what it iterates, and a parameter by the names of the caller's argument."""
    out = set()
    loops = {t: n.iter for n in descendants(scope) if type(n) is cst.For for t in names_in(n.target)}
    stack, seen = list(names_in(expr)), set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in loops and not (type(scope) is cst.For and name in names_in(scope.target)):
            stack += names_in(loops[name])
        elif name in bind:
            out |= set(names_in(bind[name]))
        else:
            out.add(name)
    return out


def resolve(expr: cst.BaseExpression, bind: dict) -> cst.BaseExpression:
    """``expr`` with a parameter replaced by the caller's argument."""
    if type(expr) is cst.Name and expr.value in bind:
        return bind[expr.value]
    return expr


def _bind(fn: cst.FunctionDef, call: cst.Call) -> dict:
    params = [p.name.value for p in fn.params.params]
    out: dict = {}
    k = 0
    for a in call.args:
        if a.star:
            return out
        if a.keyword is not None:
            out[a.keyword.value] = a.value
        elif k < len(params):
            out[params[k]] = a.value
            k += 1
    return out


def first_call_of(loop: cst.For, names: set) -> Optional[cst.Call]:
    """The first call in the loop's body of one of ``names`` (the code of its callee)."""
    return next((c for c in body_calls(loop.body) if code(c.func) in names), None)


def compiled_site(loop: cst.For, reached: list, names: set) -> Optional[tuple]:
    """(call, helper) for the first call in the loop's body of one of ``names`` (helper None), or
    else for the first call of one in a module-level function the loop calls (by its name, or
    through a parameter the loop's call gives one of them to; helper: that function's name).
    ``reached``: ``reached_calls(module, loop)``."""
    site = first_call_of(loop, names)
    if site is not None:
        return site, None
    for call, bind, scope in reached:
        if scope is loop:
            continue
        passed = {p for p, arg in bind.items() if code(arg) in names}
        if code(call.func) in names or code(call.func) in passed:
            return call, scope.name.value
    return None
