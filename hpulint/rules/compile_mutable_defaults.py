"""A mutable default argument that the compiled region grows, for HPU017.

A default list, dict or set (``def smoothed(loss, _recent=[])``) is one object kept on the function
and shared by every call, an idiom for state that survives between calls. Dynamo reads it as it
reads a global: when the compiled code appends to it, the graph is guarded on its length, so the
next call (one item longer) fails the guard and recompiles. Measured on torch 2.13 (CPU, ``eager``
backend; counts in tests/test_compile_kinds20.py): a compiled loss smoother appending the detached
loss to its default list and dropping the oldest beyond three items, called six times, is 4 graphs
and 3 recompiles (one per length until the window is full; an unbounded list recompiles every call
until ``recompile_limit``); a dict default given a new key per call recompiles the same way. A
default list only read (``scales=[1, 2, 4]``) is one graph, and so is ``window=None`` with a fresh
list made in the body.
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import code
from hpulint.rules.compiled_region import compiled_why
from hpulint.rules.compile_reach_syntax import walk_body

GROW = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "appendleft"})
MUTABLE = (cst.List, cst.Dict, cst.Set)
MESSAGE = (
    "`{stmt}` grows `{param}`, the mutable default of {fn}() ({where}): the default is one object kept "
    "across calls, and Dynamo guards the graph on its length, so each call that finds it longer recompiles "
    "(until it stops growing, or `recompile_limit` ({limit}) and then an eager fallback). Keep the state "
    "outside the compiled function (a tensor buffer it updates in place, or a window the eager caller "
    "keeps and passes in), or default to `None` and make a fresh container in the body"
)


def mutable_defaults(an, limit: int) -> list:
    """(statement, message) for the first statement of a compiled-region function that grows one
    of its list, dict or set defaults (`param.append(...)`, `param[k] = ...`, `param += [...]`)."""
    out = []
    for fn in an.all_functions:
        node = fn.node
        if type(node) is not cst.FunctionDef:
            continue
        params = {p.name.value for p in (*node.params.params, *node.params.kwonly_params)
                  if p.default is not None and _mutable(p.default)}
        if not params:
            continue
        grown = _grown(node, params)
        if grown is None:
            continue
        reason = compiled_why(an, fn)
        if reason is None:
            continue
        at, param = grown
        out.append((at, MESSAGE.format(stmt=code(at), param=param, fn=fn.name, where=reason, limit=limit)))
    return out


def _mutable(default) -> bool:
    if type(default) in MUTABLE:
        return True
    return type(default) is cst.Call and type(default.func) is cst.Name \
        and default.func.value in ("list", "dict", "set") and not default.args


def _grown(node: cst.FunctionDef, params: set):
    """(node, parameter) of the first growth of one of ``params`` in the body, or None. A parameter
    rebound in the body (`window = list(window)`) is not the default any more."""
    rebound = set()
    for n in walk_body(node):
        if type(n) is cst.AssignTarget and type(n.target) is cst.Name:
            rebound.add(n.target.value)
    params = params - rebound
    for n in walk_body(node):
        tp = type(n)
        if tp is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in GROW \
                and type(n.func.value) is cst.Name and n.func.value.value in params:
            return n, n.func.value.value
        if tp is cst.AssignTarget and type(n.target) is cst.Subscript and type(n.target.value) is cst.Name \
                and n.target.value.value in params:
            return n.target, n.target.value.value
        if tp is cst.AugAssign and type(n.target) is cst.Name and n.target.value in params \
                and type(n.operator) is cst.AddAssign:
            return n, n.target.value
    return None
