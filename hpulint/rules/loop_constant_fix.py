"""HPU001's rewrite of a counted loop (the Gaudi guide's ``steps[i]`` example): read fixed
positions of the buffer and ``torch.roll`` it one place each pass."""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import code, names_in
from hpulint.model import UNSAFE, Fix


def roll_rewrite(loop: cst.For, i: str, torch: str, imports: tuple):
    """The roll fix of ``loop`` over counter ``i``, or None when the loop does not fit it."""
    uses = []  # (Subscript, offset)
    buffer = None
    for sub in _walk_body(loop.body):
        if type(sub) is cst.Continue:
            return None  # the roll at the end of the body would be skipped
        if type(sub) is cst.Subscript and len(sub.slice) == 1 and type(sub.slice[0].slice) is cst.Index:
            offset = _offset(sub.slice[0].slice.value, i)
            if offset is not None and type(sub.value) is cst.Name:
                if buffer not in (None, sub.value.value):
                    return None
                buffer = sub.value.value
                uses.append((sub, offset))
    if buffer is None:
        return None
    counted = sum(1 for n in names_in(loop.body) if n == i)
    if counted != len(uses):
        return None  # the counter is used some other way too
    assigned = {t.value for t in _assigned_names(loop.body)}
    if buffer in assigned or i in assigned:
        return None
    roll = cst.parse_statement(f"{buffer} = {torch}.roll({buffer}, shifts=-1, dims=0)\n")
    changes = {}
    for sub, offset in uses:
        changes[sub.slice[0].slice.value] = cst.Integer(str(offset))
    start = loop.iter.args[0].value if len(loop.iter.args) == 2 else None
    pre = None
    if start is not None and not (type(start) is cst.Integer and start.evaluated_value == 0):
        text = code(start)
        shift = f"-{text}" if type(start) in (cst.Integer, cst.Name) else f"-({text})"
        pre = cst.parse_statement(f"{buffer} = {torch}.roll({buffer}, shifts={shift}, dims=0)\n")

    def rewrite(updated: cst.For):
        body = updated.body
        if type(body) is not cst.IndentedBlock:
            return updated
        new = updated.with_changes(body=body.with_changes(body=[*body.body, roll]))
        if pre is None:
            return new
        return cst.FlattenSentinel([pre.with_changes(leading_lines=updated.leading_lines),
                                    new.with_changes(leading_lines=())])

    changes[loop] = rewrite
    return Fix(UNSAFE, f"read fixed positions of `{buffer}` and torch.roll it each pass", changes, imports)


def _walk_body(node: cst.CSTNode):
    """Every node below ``node``, not entering nested functions, classes or lambdas."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        stack.extend(reversed(n.children))


def _offset(expr: cst.BaseExpression, i: str):
    """0 for ``i``, c for ``i + c`` / ``c + i`` with a non-negative integer literal c."""
    if type(expr) is cst.Name and expr.value == i:
        return 0
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Add:
        for a, b in ((expr.left, expr.right), (expr.right, expr.left)):
            if type(a) is cst.Name and a.value == i and type(b) is cst.Integer:
                return b.evaluated_value
    return None


def _assigned_names(body: cst.CSTNode):
    for n in _walk_body(body):
        if type(n) is cst.AssignTarget:
            yield from (t for t in _walk_body(n.target) if type(t) is cst.Name)
        elif type(n) in (cst.AugAssign, cst.AnnAssign) and type(n.target) is cst.Name:
            yield n.target
