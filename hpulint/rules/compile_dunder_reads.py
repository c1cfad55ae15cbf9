"""Methods of the file's own classes that Dynamo runs inline although the compiled code names no
function of theirs, for compile_reach (HPU012-HPU017 see them as compiled). Measured on torch 2.13
(CPU, ``eager`` backend; the counts are in tests/test_compile_kinds20.py):

- ``__len__`` of an instance the compiled code passes to ``len()`` (a device-resident replay buffer
  whose ``__len__`` returns ``int(self.count)``): Dynamo runs the method, so ``int()`` of a tensor
  there is a graph break at that line; a ``__len__`` that returns a shape (``self.data.shape[0]``)
  is traced;
- ``__bool__`` (or ``__len__`` when the class has no ``__bool__``) of an instance the compiled code
  tests for truth (``if mask:``, ``not mask``, ``bool(mask)``, ``a and mask``): the same, a
  ``bool(self.padded.any())`` in it breaks the graph at that line; one returning a Python bool
  computed in ``__init__`` is traced;
- a callback method (``cb.on_loss(loss)`` in ``for cb in self.callbacks:``) called on an object the
  analysis knows nothing about, when exactly one class of the file defines a method of that name and
  the file makes an instance of it: Dynamo inlines the call, so a ``float(loss)`` in the callback is a
  graph break there; its parameters get what the call gives them.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import child_nodes, code
from hpulint.analysis.values import INST, MODEL, UNKNOWN
from hpulint.rules.compile_reach_syntax import class_called, walk_body

TRUTH = ("__bool__", "__len__")
# method names too common to pin on the one class of the file that defines them
COMMON = frozenset({"forward", "__call__", "step", "update", "append", "extend", "add", "get", "items", "keys",
                    "values", "pop", "reset", "clear", "copy", "run", "apply", "train", "eval", "to", "cpu",
                    "cuda", "detach", "numpy", "item", "tolist", "zero_grad", "backward", "state_dict",
                    "load_state_dict", "parameters", "log", "write", "read", "close", "format", "sum", "mean"})


def dunder_why(reach, an, fn) -> Optional[str]:
    """Why Dynamo runs ``fn`` (a `__len__`/`__bool__` of a class of the file) inside a compiled
    region, or None."""
    if fn.cls is None or fn.name not in TRUTH:
        return None
    has_bool = any(g.cls is fn.cls and g.name == "__bool__" for g in reach.fns.values())
    for g in reach.fns.values():
        if g is fn or type(g.node) is not cst.FunctionDef:
            continue
        for expr, how in _used(g.node):
            if how == "len" and fn.name != "__len__" or how == "truth" and fn.name != ("__bool__" if has_bool
                                                                                       else "__len__"):
                continue
            if not _plain(expr) or _class_of(reach, an, g, expr) != fn.cls.name:
                continue
            runs = reach._full(an, g)
            if runs is not None:
                said = f"`len({code(expr)})`" if how == "len" else f"the truth test of `{code(expr)}`"
                return f"run by {said} in {g.name}(), {runs}"
    return None


def callback_why(reach, an, fn) -> Optional[str]:
    """Why Dynamo runs ``fn``, a method only one class of the file defines, called on an object of
    unknown class in a compiled region (a callback), or None; binds its parameters."""
    if fn.cls is None or fn.name in COMMON or fn.name.startswith("_") or type(fn.node) is not cst.FunctionDef:
        return None
    if any(g is not fn and g.cls is not None and g.name == fn.name for g in reach.fns.values()):
        return None  # two classes define it: which one runs is not known
    if not _instantiated(reach, fn.cls.name):
        return None
    for g in reach.fns.values():
        if g is fn or g.cls is fn.cls:
            continue
        for site in g.calls:
            func = site.node.func
            if type(func) is not cst.Attribute or func.attr.value != fn.name or not _plain(func.value):
                continue
            if type(func.value) is cst.Name and func.value.value == "self":
                continue
            if an.resolve(an.value(func.value)).kind != UNKNOWN:
                continue
            runs = reach._full(an, g)
            if runs is None:
                continue
            params = [p for p in fn.params if not p.startswith("*")][1:]
            for k, v in enumerate(site.args):
                if v is None or k >= len(params):
                    break
                reach._bind(fn.fid, params[k], an.resolve(v))
            return (f"the only method `{fn.name}` of the file, called on `{code(func.value)}` in {g.name}() "
                    f"(`{code(func)}(...)`), {runs}")
    return None


def _class_of(reach, an, g, expr) -> Optional[str]:
    """The name of the file's class ``expr`` is an instance of, in ``g``: what the analysis says, a
    name assigned `C(...)` in ``g`` or at module level, or a parameter of ``g`` given `C(...)` (or a
    name assigned it) by a call of ``g`` (of the compiled module, for a `forward`)."""
    # (after the walk no function is being walked: `self.x` has no method's bindings to read)
    got = an.resolve(an.value(expr)) if an.function is not None or type(expr) is cst.Name else None
    if got is not None and got.kind in (INST, MODEL) and got.ref:
        return got.ref.rsplit(".", 1)[-1].rsplit(":", 1)[-1]
    if type(expr) is not cst.Name:
        return None
    name = expr.value
    params = [p for p in g.params if not p.startswith("*")]
    if g.cls is not None:
        params = params[1:]
    if name not in params:
        return class_called(reach, name, (g.node,))
    k = params.index(name)
    for call in _module_calls(reach):
        if not _calls_def(reach, call.func, g):
            continue
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        given = positional[k] if k < len(positional) else next(
            (a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
        if type(given) is cst.Call and type(given.func) is cst.Name:
            return given.func.value
        if type(given) is cst.Name:
            return class_called(reach, given.value, ())
    return None


def _calls_def(reach, func, g) -> bool:
    """``func`` names ``g``: a function by its name, a method `forward`/`__call__` through an
    instance of its class or a `torch.compile` of one."""
    if type(func) is not cst.Name:
        return False
    if g.cls is None:
        return func.value == g.name
    if g.name not in ("forward", "__call__"):
        return False
    if class_called(reach, func.value, ()) == g.cls.name:
        return True
    value = reach.assigned.get(id(reach.module), {}).get(func.value)
    if type(value) is cst.Call and value.args:
        first = value.args[0].value
        if type(first) is cst.Call and type(first.func) is cst.Name:
            return first.func.value == g.cls.name
        return type(first) is cst.Name and class_called(reach, first.value, ()) == g.cls.name
    return False


def _plain(expr) -> bool:
    while type(expr) is cst.Attribute:
        expr = expr.value
    return type(expr) is cst.Name


def _used(fn_node):
    """(expression, "len" | "truth") for `len(x)`, `bool(x)`, `if x:`, `not x`, `x and y` in the body."""
    for n in walk_body(fn_node):
        tp = type(n)
        if tp is cst.Call and type(n.func) is cst.Name and n.func.value in ("len", "bool") and len(n.args) == 1:
            yield n.args[0].value, "len" if n.func.value == "len" else "truth"
        elif tp in (cst.If, cst.While, cst.IfExp):
            yield n.test, "truth"
        elif tp is cst.UnaryOperation and type(n.operator) is cst.Not:
            yield n.expression, "truth"
        elif tp is cst.BooleanOperation:
            yield n.left, "truth"
            yield n.right, "truth"


def _instantiated(reach, name: str) -> bool:
    """The file makes an instance of the class (`monitor = Monitor()`, `[Monitor()]`)."""
    return any(type(c.func) is cst.Name and c.func.value == name for c in _module_calls(reach))


def _module_calls(reach) -> list:
    """Every call of the file (walked once, kept on the reach)."""
    calls = reach.__dict__.get("_all_calls")
    if calls is None:
        calls, stack = [], [reach.module]
        while stack:
            n = stack.pop()
            if type(n) is cst.Call:
                calls.append(n)
            stack += child_nodes(n)
        reach.__dict__["_all_calls"] = calls
    return calls
