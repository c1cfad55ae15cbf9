"""Syntax helpers of compile_reach: the parameters a reached function is given, the attribute
reads, loop targets, defs and returned functions it looks for."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import child_nodes
from hpulint.analysis.values import Param


class BoundParams:
    """An environment that answers some parameters itself (what a hook or a table call gives
    them) and asks the file's environment everything else."""

    def __init__(self, env, params: dict) -> None:
        self.env = env
        self.bound = params

    def param(self, fid: str, name: str):
        got = self.bound.get((fid, name))
        return got if got is not None else self.env.param(fid, name)

    def __getattr__(self, name):
        return getattr(self.env, name)


def class_called(reach, name: str, funcs) -> Optional[str]:
    """The class a name was last assigned an instance of (`trainer = Trainer(...)`)."""
    for scope in (*reversed(funcs), reach.module):
        value = reach.assigned.get(id(scope), {}).get(name)
        if type(value) is cst.Call and type(value.func) is cst.Name:
            return value.func.value
    return None


def has_param(v) -> bool:
    """Whether a value mentions a parameter (else binding parameters cannot change it)."""
    stack, seen = [v], 0
    while stack and seen < 200:
        x = stack.pop()
        seen += 1
        if isinstance(x, Param):
            return True
        for slot in getattr(type(x), "__slots__", ()):
            sub = getattr(x, slot, None)
            if isinstance(sub, tuple):
                stack += [s for s in sub if hasattr(s, "tag")]
            elif hasattr(sub, "tag"):
                stack.append(sub)
    return False


def same_or_sub(cls, base) -> bool:
    if cls is base:
        return True
    return any(b.rsplit(".", 1)[-1].rsplit(":", 1)[-1] == base.name for b in cls.bases)


def reads_attr(fn_node, owner: str, attr: str) -> bool:
    """``owner.attr`` read (not assigned) in the function."""
    stores = set()
    for n in walk_body(fn_node):
        if type(n) is cst.AssignTarget or type(n) is cst.AugAssign:
            stores.add(id(n.target))
        elif type(n) is cst.Attribute and n.attr.value == attr and type(n.value) is cst.Name \
                and n.value.value == owner and id(n) not in stores:
            return True
    return False


def walk_body(node):
    """The nodes of a function's body (not its decorators), nested functions included."""
    body = node.body
    stack = list(reversed(child_nodes(body))) if type(node) is cst.FunctionDef else [body]
    while stack:
        n = stack.pop()
        yield n
        stack += reversed(child_nodes(n))


def loop_targets(loop) -> list:
    if type(loop) is cst.For:
        return [(loop.target, loop.iter)]
    out, f = [], loop.for_in
    while f is not None:
        out.append((f.target, f.iter))
        f = f.inner_for_in
    return out


def def_in(funcs, module, name: str):
    for scope in (*reversed(funcs), module):
        body = scope.body.body if type(scope) is cst.FunctionDef else scope.body if type(scope) is cst.Module else ()
        for st in body:
            if type(st) is cst.FunctionDef and st.name.value == name:
                return st
    return None


def returned_functions(factory: cst.FunctionDef) -> list:
    """`def track(name): def hook(...): ...; return hook` -> [hook]; `return lambda ...` -> [lambda]."""
    out = []
    for st in factory.body.body:
        if type(st) is not cst.SimpleStatementLine:
            continue
        for small in st.body:
            if type(small) is cst.Return and type(small.value) is cst.Lambda:
                out.append(small.value)
            elif type(small) is cst.Return and type(small.value) is cst.Name:
                found = def_in((factory,), None, small.value.value)
                if found is not None:
                    out.append(found)
    return out
