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


# --- the fixes HPU001 offers (both unsafe: they change which element is read when, and leave the
# buffer rolled after the loop; a user must check the loop), decided once the project is linked ------


def fix_later(an, roll_fixes: dict, node: cst.Subscript, name: str, origin):
    """The fix, decided once the project is linked: only for a step loop's own counter, and
    a device index only into a device tensor (a list has no `.device`). What the walk knows
    (names imported so far, counters in scope) is taken now; the fix is built only for a
    report that is made (building one parses its new code)."""
    if isinstance(origin, str):
        return None
    roll = _roll_fix_later(an, roll_fixes, origin, name)
    device = _device_index_fix(an, node)
    base = an.value(node.value)

    def build():
        if not origin.is_step_loop:
            return None
        fix = roll() if roll is not None else None
        if fix is not None:
            return fix
        return device() if an.is_device_tensor(base) and device is not None else None

    return build


def _roll_fix_later(an, roll_fixes: dict, loop, name: str):
    """One fix per loop, shared by its reports (the first report's counter decides it)."""
    if loop is None or type(loop.node) is not cst.For:
        return None
    key = id(loop.node)
    if key not in roll_fixes:
        roll_fixes[key] = _roll_fix(an, loop.node, name)
    return roll_fixes[key]


def _roll_fix(an, loop: cst.For, i: str):
    """The seed's rewrite of ``for i in range(a, n): ... steps[i] ... steps[i + 1]``:
    read ``steps[0]``, ``steps[1]`` and ``torch.roll`` the buffer one place each pass
    (a callable building it, or None)."""
    if not (type(loop.target) is cst.Name and loop.target.value == i and type(loop.iter) is cst.Call
            and an.qualname(loop.iter.func) == "range" and 1 <= len(loop.iter.args) <= 2
            and not any(a.keyword or a.star for a in loop.iter.args)):
        return None
    torch = an.local_name_for("torch") or "torch"
    imports = () if an.local_name_for("torch") else ("import torch",)
    built = []

    def build():
        if not built:
            built.append(roll_rewrite(loop, i, torch, imports))
        return built[0]

    return build


def _device_index_fix(an, node: cst.Subscript):
    """Index with a device tensor built from the counter: graph data, not a constant (a
    callable building the fix, or None)."""
    torch = an.local_name_for("torch") or "torch"
    imports = () if an.local_name_for("torch") else ("import torch",)
    indexes = []
    for el in node.slice:
        s = el.slice
        if type(s) is cst.Slice:
            if an.counter_in(s) is not None:
                return None  # a slice bound that changes is a new shape: no data index for it
            continue
        if an.counter_in(s.value) is None:
            continue
        indexes.append(s.value)
    if not indexes:
        return None

    def build():
        base = code(node.value)
        changes = {}
        for index in indexes:
            changes[index] = cst.parse_expression(f"{torch}.tensor({code(index)}, device={base}.device)")
        return Fix(UNSAFE, "index with a device tensor", changes, imports)

    return build
