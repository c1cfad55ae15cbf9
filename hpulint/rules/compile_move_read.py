"""HPU012's fix: a print or logging statement that only logs a value the compiled function
returns is moved out of the function, to just after each call.

    @torch.compile                          @torch.compile
    def step(x):                            def step(x):
        loss = (x * 2).sum()                    loss = (x * 2).sum()
        print(f"loss {loss.item():.3f}")        return loss
        return loss
                                            for ...:
    for ...:                                    out = step(x)
        out = step(x)                           print(f"loss {out.item():.3f}")

It is offered only when the output cannot change in this file: the statement is a bare
``print(...)``/logger call directly in the body of a function decorated with ``torch.compile``,
right before its last statement ``return NAME``; the only local it reads is ``NAME``; and every
use of the function's name in the file is a call assigned to one name (``out = step(...)``),
where the moved statement reads that name instead. The fix is *unsafe*: a module that imports
the function would no longer print.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.model import UNSAFE, Fix


def move_read_fix(module: Optional[cst.Module], stmt, fn_node, is_compile_decorator) -> Optional[Fix]:
    if module is None or type(stmt) is not cst.SimpleStatementLine or type(fn_node) is not cst.FunctionDef:
        return None
    if not any(is_compile_decorator(d) for d in fn_node.decorators):
        return None
    if len(stmt.body) != 1 or type(stmt.body[0]) is not cst.Expr or type(stmt.body[0].value) is not cst.Call:
        return None
    body = list(fn_node.body.body)
    if stmt not in body:
        return None  # nested in an if/for/with: it may not run on every call
    i = next(k for k, s in enumerate(body) if s is stmt)
    returned = _returned_name(body[i + 1:])
    if returned is None:
        return None
    local = _locals(fn_node)
    read = _names_read(stmt)
    if any(n in local and n != returned for n in read):
        return None
    sites = _call_sites(module, fn_node.name.value)
    if not sites or any(target != returned and target in read for _, target in sites):
        return None
    changes: dict = {stmt: cst.RemovalSentinel.REMOVE}
    for site, target in sites:
        moved = _Rename(returned, target).rename(stmt).with_changes(leading_lines=[])
        changes[site] = cst.FlattenSentinel([site, moved])
    return Fix(UNSAFE, f"move the print/log out of {fn_node.name.value}(): after each call, on what it returns",
               changes)


def _returned_name(rest: list) -> Optional[str]:
    """``NAME`` when the statements after the print are exactly ``return NAME``."""
    if len(rest) != 1 or type(rest[0]) is not cst.SimpleStatementLine or len(rest[0].body) != 1:
        return None
    ret = rest[0].body[0]
    if type(ret) is cst.Return and type(ret.value) is cst.Name:
        return ret.value.value
    return None


def _locals(fn: cst.FunctionDef) -> set:
    out = {p.name.value for p in (*fn.params.params, *fn.params.kwonly_params, *fn.params.posonly_params)}
    for p in (fn.params.star_arg, fn.params.star_kwarg):
        if type(p) is cst.Param:
            out.add(p.name.value)
    stack = list(fn.body.body)
    while stack:
        n = stack.pop()
        if type(n) in (cst.AssignTarget, cst.AnnAssign, cst.AugAssign):
            out |= _target_names(n.target)
        elif type(n) in (cst.For, cst.CompFor):
            out |= _target_names(n.target)
        elif type(n) in (cst.With,):
            for item in n.items:
                if item.asname is not None:
                    out |= _target_names(item.asname.name)
        elif type(n) is cst.NamedExpr:
            out |= _target_names(n.target)
        elif type(n) in (cst.FunctionDef, cst.ClassDef):
            out.add(n.name.value)
            continue
        stack += list(n.children)
    return out


def _target_names(t) -> set:
    if type(t) is cst.Name:
        return {t.value}
    if type(t) in (cst.Tuple, cst.List):
        return set().union(*(_target_names(e.value) for e in t.elements)) if t.elements else set()
    if type(t) is cst.StarredElement:
        return _target_names(t.value)
    return set()


def _names_read(node: cst.CSTNode) -> set:
    skip = _not_variables(node)
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Name and id(n) not in skip:
            out.add(n.value)
        stack += list(n.children)
    return out


def _not_variables(node: cst.CSTNode) -> set:
    """ids of the Name nodes that are attribute names or keyword names, not variables."""
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Attribute:
            out.add(id(n.attr))
        elif type(n) is cst.Arg and n.keyword is not None:
            out.add(id(n.keyword))
        stack += list(n.children)
    return out


def _call_sites(module: cst.Module, name: str) -> list:
    """[(statement, target name)] for every use of ``name``, or [] if one use is anything but
    ``TARGET = name(...)`` (a statement of its own) or the function's own def."""
    sites, stack = [], [module]
    while stack:
        n = stack.pop()
        if type(n) is cst.SimpleStatementLine and len(n.body) == 1 and type(n.body[0]) is cst.Assign:
            a = n.body[0]
            if len(a.targets) == 1 and type(a.targets[0].target) is cst.Name and type(a.value) is cst.Call \
                    and type(a.value.func) is cst.Name and a.value.func.value == name:
                sites.append((n, a.targets[0].target.value))
        stack += list(n.children)
    skip = _not_variables(module)
    uses = sum(1 for n in _all_names(module, name) if id(n) not in skip)
    return sites if uses == 1 + len(sites) else []  # the def's own name, then one use per site


def _all_names(module: cst.Module, name: str) -> list:
    out, stack = [], [module]
    while stack:
        n = stack.pop()
        if type(n) is cst.Name and n.value == name:
            out.append(n)
        stack += list(n.children)
    return out


class _Rename(cst.CSTTransformer):
    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new
        self.skip: set = set()

    def rename(self, stmt: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        self.skip = _not_variables(stmt)
        return stmt.visit(self)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if id(original) not in self.skip and original.value == self.old:
            return updated.with_changes(value=self.new)
        return updated
