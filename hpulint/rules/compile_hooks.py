"""Gradient hooks registered in a compiled region that write state outside the hook, for HPU012.

Measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md): ``t.register_hook(f)``
inside a compiled function is traced, but when ``f`` stores into a dict, list or object that
lives outside it (`saved[name] = grad` through a closure or a global, `box.g = g`), Dynamo breaks
the graph at that store ("HOP: Unsafe side effect"); a bound method such as `grads.append` breaks
at the `register_hook` line. A hook that only computes and returns a gradient (`lambda g: g * 0.5`,
`def hook(g): return g.clamp(-1, 1)`) does not break.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, param_names, root_name

MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "pop", "clear"})
HOOK_WHY = ("a gradient hook registered in the compiled region ({where}) writes `{target}`, which lives "
            "outside the hook: Dynamo cannot trace that side effect (\"HOP: Unsafe side effect\")")
FIX_HOOK = ("Register the hook in the eager code (on the tensor the compiled function returns), or keep "
            "the hook free of side effects and read the gradient after `backward()` (`retain_grad()`)")


def hook_effects(module: cst.Module, current: Optional[cst.FunctionDef], hook: cst.BaseExpression) -> list:
    """The side effects of the hook ``hook`` (an argument of `register_hook`), as (node to
    report, what it writes); the node is None for a bound method (reported at the
    `register_hook` call, where Dynamo breaks)."""
    if type(hook) is cst.Attribute and hook.attr.value in MUTATORS and type(hook.value) is cst.Name:
        return [(None, code(hook.value))]
    if type(hook) is cst.Lambda:
        local = {p.name.value for p in hook.params.params}
        return [(None, root) for root in _mutator_roots(hook.body, local)]
    fn = None
    if type(hook) is cst.Name:
        fn = _def_named(current, hook.value) if current is not None else None
        fn = fn or _def_named(module, hook.value)
    elif type(hook) is cst.Call and type(hook.func) is cst.Name:
        factory = _def_named(module, hook.func.value)
        fn = _returned_def(factory) if factory is not None else None
    if fn is None:
        return []
    return _def_effects(fn)


def _def_effects(fn: cst.FunctionDef) -> list:
    local = set(param_names(fn))
    out = []
    for stmt in _statements(fn.body):
        for small in stmt.body if type(stmt) is cst.SimpleStatementLine else ():
            if type(small) is cst.Assign:
                for t in small.targets:
                    if type(t.target) is cst.Name:
                        local.add(t.target.value)
    for stmt in _statements(fn.body):
        if type(stmt) is not cst.SimpleStatementLine:
            continue
        for small in stmt.body:
            targets = []
            if type(small) is cst.Assign:
                targets = [t.target for t in small.targets]
            elif type(small) is cst.AugAssign:
                targets = [small.target]
            for t in targets:
                root = root_name(t)
                if type(t) in (cst.Subscript, cst.Attribute) and root is not None and root not in local:
                    out.append((stmt, code(t)))
            if type(small) is cst.Expr:
                for root in _mutator_roots(small.value, local):
                    out.append((stmt, root))
    return out


def _mutator_roots(expr: cst.BaseExpression, local: set) -> list:
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in MUTATORS:
        root = root_name(expr.func.value)
        if root is not None and root not in local:
            return [code(expr.func.value)]
    return []


def _statements(body):
    """The statements of a body, into `if`/`for`/`with`/`try` blocks but not nested defs."""
    stack = list(reversed(body.body)) if hasattr(body, "body") else []
    while stack:
        st = stack.pop()
        yield st
        if type(st) in (cst.FunctionDef, cst.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(st, field, None)
            if sub is None:
                continue
            inner = getattr(sub, "body", None)
            if isinstance(inner, (list, tuple)):
                stack.extend(reversed(inner))
            elif inner is not None and hasattr(inner, "body"):
                stack.extend(reversed(inner.body))
        for h in getattr(st, "handlers", ()) or ():
            stack.extend(reversed(h.body.body))


def _def_named(scope, name: str) -> Optional[cst.FunctionDef]:
    body = scope.body if type(scope) is cst.Module else scope.body.body
    for st in body:
        if type(st) is cst.FunctionDef and st.name.value == name:
            return st
    return None


def _returned_def(factory: cst.FunctionDef) -> Optional[cst.FunctionDef]:
    """`def remember(name): def hook(grad): ...; return hook` -> hook."""
    for st in factory.body.body:
        if type(st) is cst.SimpleStatementLine:
            for small in st.body:
                if type(small) is cst.Return and type(small.value) is cst.Name:
                    return _def_named(factory, small.value.value)
    return None


# A hook that removes its own handle (measured on torch 2.13, CPU, `eager` backend; c464 and
# tests/test_compile_kinds23.py): a forward (pre-)hook run by the compiled module that calls
# `self.handle.remove()` (an init-once hook object) or `handles[module].remove()` on the handle
# `register_forward_pre_hook`/`register_forward_hook`... returned in the eager code: "Attempted to represent
# unregistered RemovableHandle", a break at the `remove()` line Dynamo cannot resume from (the rest of the
# hook runs eagerly). Run the hook once in the eager code and remove it before compiling: one graph.
REMOVE_WHY = ("Dynamo cannot represent the hook handle `{handle}` made outside the compiled region (\"Attempted to "
              "represent unregistered RemovableHandle\"): removing a hook inside the region is not traced")
FIX_REMOVE = ("Run the one-off hook in the eager code (one forward pass before compiling) and remove it there, or "
              "keep the hook and return early from a flag")


def handle_remove(an, module: cst.Module, node: cst.Call) -> Optional[tuple]:
    """(what is said, why, fix, check) for `h.remove()` on a handle a `register_*hook(...)` call of the
    file returned (`self.handle`, `handle`, `handles[m]`), or None."""
    func = node.func
    if type(func) is not cst.Attribute or func.attr.value != "remove" or node.args:
        return None
    recv = func.value
    key = recv.attr.value if type(recv) is cst.Attribute else recv.value.value if type(recv) is cst.Subscript \
        and type(recv.value) is cst.Name else recv.value if type(recv) is cst.Name else None
    if key is None or key not in _handle_names(an, module):
        return None
    return f"`{code(node)}`", REMOVE_WHY.format(handle=code(recv)), FIX_REMOVE, lambda: True


def _handle_names(an, module: cst.Module) -> frozenset:
    """Names, attribute names and container names the file binds to a `register_*hook(...)` result."""
    cache = getattr(an, "_hpulint_hook_handles", None)
    if cache is not None and cache[0] is module:
        return cache[1]
    out = set()
    for n in descendants(module):
        if type(n) is not cst.Assign or type(n.value) is not cst.Call or type(n.value.func) is not cst.Attribute:
            continue
        name = n.value.func.attr.value
        if not (name.startswith("register_") and name.endswith("hook")):
            continue
        for t in n.targets:
            t = t.target
            if type(t) is cst.Name:
                out.add(t.value)
            elif type(t) is cst.Attribute:
                out.add(t.attr.value)
            elif type(t) is cst.Subscript and type(t.value) is cst.Name:
                out.add(t.value.value)
    an._hpulint_hook_handles = (module, frozenset(out))
    return an._hpulint_hook_handles[1]
