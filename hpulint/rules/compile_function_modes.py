"""A TorchFunctionMode that changes its own state, entered around the calls of a compiled callable,
for HPU017.

Dynamo traces an active ``TorchFunctionMode``'s ``__torch_function__`` into the graph for every torch
function the compiled code calls, and guards on the mode object's state. Measured on torch 2.13 (CPU,
``eager`` backend), a mode entered (``with mode:``) around the call of a compiled model at each of 12
steps: a ``__torch_function__`` that bumps ``self.total += 1`` or appends ``func`` to a list is 8 graphs,
7 recompiles and an eager fallback (the guard on that line fails at every call); entered for two of
six steps, 3 graphs; one that only calls ``func(*args, **kwargs)``, one graph. Counting into a dict
keyed by the function's ``__name__`` (``self.counts[func.__name__] += 1``, or
``getattr(func, "__name__", ...)``) is also a graph break on that line ("Dynamo cannot determine the
equality comparison of an object"), and the rest of ``__torch_function__`` recompiles for each torch
function (two steps of a four-layer model: 9 graphs, 8 recompiles); keyed by ``func`` or ``str(func)``
it is no break. A plain store is no recompile at every call (``self.last = func.__name__``: one
graph; ``self.seen[str(func)] = True``: one recompile), nor is adding to a set (``self.seen.add(func)``:
3 graphs over 12 steps; not reported).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, string_value
from hpulint.rules.compile_loop_reach import body_calls

MUTATORS = frozenset({"append", "extend", "insert", "appendleft"})  # a list that grows at every call
MESSAGE = (
    "`{cls}` is a TorchFunctionMode entered (`with {mode}:`) around calls of the compiled `{name}`: Dynamo traces its "
    "`__torch_function__` into the graph for every torch function the compiled code calls and guards on the mode's "
    "state, which `{stmt}` changes at every call, so each call under the mode recompiles, and after "
    "`recompile_limit` (8) Dynamo runs it eagerly for the rest of the run (eager fallback){key}. Keep the mode "
    "stateless while the compiled code runs: count in an eager run of the model (or with `torch.profiler`), or "
    "enter the mode inside eager code only"
)
KEY = ("; a dict keyed by the function's `__name__` is also a graph break on that line (\"Dynamo cannot determine "
       "the equality comparison of an object\")")


def stateful_modes(module: cst.Module, compiled: set) -> list:
    """(statement, message) for each TorchFunctionMode class of the file whose `__torch_function__`
    changes an attribute of the mode, when an instance of it is entered around a call of a compiled
    name (``compiled``) that runs more than once (the `with` in a loop, or a loop in the `with`)."""
    if module is None or not compiled:
        return []
    nodes = {cst.ClassDef: [], cst.Assign: [], cst.With: [], cst.For: [], cst.While: []}
    for node in descendants(module):  # one walk of the file for everything below
        bucket = nodes.get(type(node))
        if bucket is not None:
            bucket.append(node)
    modes = {}
    for node in nodes[cst.ClassDef]:
        if any(code(b.value).endswith("TorchFunctionMode") for b in node.bases):
            hit = _mutation(node)
            if hit is not None:
                modes[node.name.value] = hit
    if not modes:
        return []
    instances = {}  # name -> class: `audit = OpCounter()`
    for node in nodes[cst.Assign]:
        if type(node.value) is cst.Call and type(node.value.func) is cst.Name and node.value.func.value in modes:
            for t in node.targets:
                if type(t.target) is cst.Name:
                    instances[t.target.value] = node.value.func.value
    out, done = [], set()
    for w in _repeated_withs(nodes, compiled):
        for item in w.items:
            e = item.item
            cls = instances.get(e.value) if type(e) is cst.Name else \
                e.func.value if type(e) is cst.Call and type(e.func) is cst.Name and e.func.value in modes else None
            if cls is None or cls in done:
                continue
            site = next(c for c in body_calls(w.body) if code(c.func) in compiled)
            stmt, keyed = modes[cls]
            done.add(cls)
            out.append((stmt, MESSAGE.format(cls=cls, mode=code(e), name=code(site.func), stmt=_short(stmt),
                                             key=KEY if keyed else "")))
    return out


def _repeated_withs(nodes: dict, compiled: set) -> list:
    """`with` statements whose body calls a compiled name and that run, or whose call runs, more than
    once: inside a loop, or holding a loop around the call (``nodes``: the file's nodes by type)."""
    out = []
    for node in nodes[cst.For] + nodes[cst.While]:
        for w in descendants(node.body):
            if type(w) is cst.With and any(code(c.func) in compiled for c in body_calls(w.body)):
                out.append(w)
    for w in nodes[cst.With]:
        if any(type(n) in (cst.For, cst.While) and any(code(c.func) in compiled
                                                                              for c in body_calls(n.body))
                                       for n in descendants(w.body)):
            out.append(w)
    return out


def _mutation(cls: cst.ClassDef) -> Optional[tuple]:
    """(first statement of `__torch_function__` that changes an attribute of `self`, keyed by the
    function's `__name__`) or None."""
    fn = next((st for st in cls.body.body if type(st) is cst.FunctionDef and st.name.value == "__torch_function__"),
              None)
    if fn is None or len(fn.params.params) < 2:
        return None
    me, func = fn.params.params[0].name.value, fn.params.params[1].name.value
    for n in descendants(fn.body):
        target = None
        if type(n) is cst.AugAssign:
            target = n.target
        elif type(n) is cst.Assign and len(n.targets) == 1 and _reads_own(n):
            target = n.targets[0].target  # `self.n = self.n + 1`, `self.d[k] = self.d.get(k, 0) + 1`
        elif type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in MUTATORS:
            target = n.func.value
        if target is not None and type(target) in (cst.Attribute, cst.Subscript) and _root(target) == me:
            return n, any(_name_of(k, func) for k in descendants(n))
    return None


def _reads_own(n: cst.Assign) -> bool:
    """The assigned value reads the attribute it is stored in (a plain store does not recompile:
    `self.last = func.__name__`, one graph; `self.seen[str(func)] = True`, one recompile)."""
    target = n.targets[0].target
    while type(target) is cst.Subscript:
        target = target.value
    return any(type(k) is cst.Attribute and code(k) == code(target) for k in descendants(n.value))


def _root(expr: cst.BaseExpression) -> Optional[str]:
    while type(expr) in (cst.Attribute, cst.Subscript):
        expr = expr.value
    return expr.value if type(expr) is cst.Name else None


def _name_of(node: cst.CSTNode, func: str) -> bool:
    """A dict key made of the function's `__name__`: `d[func.__name__]`, `d[getattr(func, "__name__", ...)]`."""
    if type(node) is not cst.Subscript:
        return False
    for el in node.slice:
        for k in descendants(el):
            if type(k) is cst.Attribute and k.attr.value == "__name__" and code(k.value) == func:
                return True
            if type(k) is cst.Call and code(k.func) == "getattr" and len(k.args) >= 2 \
                    and code(k.args[0].value) == func and string_value(k.args[1].value) == "__name__":
                return True
    return False


def _short(stmt: cst.CSTNode) -> str:
    text = code(stmt)
    return text if len(text) <= 70 and "\n" not in text else text.splitlines()[0][:67] + "..."
