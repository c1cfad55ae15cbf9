"""HPU001 loop-iterator-constant: a loop counter baked into the graph as a constant.

Source: seed 002 (Gaudi docs, "Avoiding Constant Variables in Loops"): ``steps[i]`` creates a
different constant operator in the graph each pass, so each pass compiles a new graph; the
Gaudi V-Diffusion model reads ``steps[0]`` and rolls the buffer instead.
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis import code, names_in
from hpulint.model import UNSAFE, Fix
from hpulint.rules.base import Rule

# torch factories whose positional arguments are sizes
FACTORIES = frozenset(
    f"torch.{n}" for n in ("zeros", "ones", "empty", "full", "rand", "randn", "randint",
                           "arange", "eye", "randperm", "tril_indices", "triu_indices")
)
# tensor methods / torch functions whose integer arguments shape the graph
SHAPING = frozenset(
    {"view", "reshape", "expand", "repeat", "narrow", "select", "roll", "unfold", "transpose",
     "movedim", "new_zeros", "new_ones", "new_empty", "new_full", "unsqueeze", "squeeze",
     "flatten", "split", "chunk", "tensor_split", "tile", "diagonal", "pad"}
)
SHAPING_KEYWORDS = frozenset({"dim", "dims", "shifts", "size", "start", "length", "index", "sizes",
                              "shape", "pad", "start_dim", "end_dim", "chunks", "split_size_or_sections"})

MESSAGE = (
    "loop counter `{name}` becomes a constant in the graph ({where}): every pass records a "
    "different graph, so the device compiles again on every iteration ({why}). Keep the value "
    "on the device: read a fixed position and `torch.roll` the buffer each pass, or index with "
    "a device tensor"
)


class LoopIteratorConstant(Rule):
    code = "HPU001"
    name = "loop-iterator-constant"
    summary = "a loop counter used as a tensor index, slice bound, size or dim in a step loop"
    triggers = ("for ", "while ")
    fix_safety = "unsafe"


    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.roll_fixes: dict = {}  # id(loop node) -> shared Fix or None

    def visit_Subscript(self, node: cst.Subscript) -> None:
        an = self.an
        if an.loop is None or not an.is_tensor(node.value) or an.is_host(node.value):
            return  # a host tensor's index is a host op: the device gets data, not a constant
        for el in node.slice:
            s = el.slice
            if isinstance(s, cst.Index):
                parts = [] if an.is_tensor(s.value) else [s.value]
            else:
                parts = [p for p in (s.lower, s.upper, s.step) if p is not None]
            for part in parts:
                name = an.counter_in(part)
                if name is not None:
                    where = "a slice bound" if isinstance(s, cst.Slice) else "a tensor index"
                    self._report(node, name, where, self._fix(node, name))
                    return

    # --- fixes (both unsafe: they change which element is read when, and leave the buffer
    # rolled after the loop; a user must check the loop) ---------------------------------------

    def _fix(self, node: cst.Subscript, name: str):
        loop = self.an.counter_loop(name)
        if loop is not None and isinstance(loop.node, cst.For):
            key = id(loop.node)
            if key not in self.roll_fixes:
                self.roll_fixes[key] = self._roll_fix(loop.node, name)
            if self.roll_fixes[key] is not None:
                return self.roll_fixes[key]
        return self._device_index_fix(node)

    def _roll_fix(self, loop: cst.For, i: str):
        """The seed's rewrite of ``for i in range(a, n): ... steps[i] ... steps[i + 1]``:
        read ``steps[0]``, ``steps[1]`` and ``torch.roll`` the buffer one place each pass."""
        if not (isinstance(loop.target, cst.Name) and loop.target.value == i and isinstance(loop.iter, cst.Call)
                and self.an.qualname(loop.iter.func) == "range" and 1 <= len(loop.iter.args) <= 2
                and not any(a.keyword or a.star for a in loop.iter.args)):
            return None
        uses = []  # (Subscript, offset)
        buffer = None
        for sub in _walk_body(loop.body):
            if isinstance(sub, cst.Continue):
                return None  # the roll at the end of the body would be skipped
            if isinstance(sub, cst.Subscript) and len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index):
                offset = _offset(sub.slice[0].slice.value, i)
                if offset is not None and isinstance(sub.value, cst.Name):
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
        torch = self.an.local_name_for("torch") or "torch"
        imports = () if self.an.local_name_for("torch") else ("import torch",)
        roll = cst.parse_statement(f"{buffer} = {torch}.roll({buffer}, shifts=-1, dims=0)\n")
        changes = {}
        for sub, offset in uses:
            changes[sub.slice[0].slice.value] = cst.Integer(str(offset))
        start = loop.iter.args[0].value if len(loop.iter.args) == 2 else None
        pre = None
        if start is not None and not (isinstance(start, cst.Integer) and start.evaluated_value == 0):
            text = code(start)
            shift = f"-{text}" if isinstance(start, (cst.Integer, cst.Name)) else f"-({text})"
            pre = cst.parse_statement(f"{buffer} = {torch}.roll({buffer}, shifts={shift}, dims=0)\n")

        def rewrite(updated: cst.For):
            body = updated.body
            if not isinstance(body, cst.IndentedBlock):
                return updated
            new = updated.with_changes(body=body.with_changes(body=[*body.body, roll]))
            if pre is None:
                return new
            return cst.FlattenSentinel([pre.with_changes(leading_lines=updated.leading_lines),
                                        new.with_changes(leading_lines=())])

        changes[loop] = rewrite
        return Fix(UNSAFE, f"read fixed positions of `{buffer}` and torch.roll it each pass", changes, imports)

    def _device_index_fix(self, node: cst.Subscript):
        """Index with a device tensor built from the counter: graph data, not a constant."""
        an = self.an
        torch = an.local_name_for("torch") or "torch"
        imports = () if an.local_name_for("torch") else ("import torch",)
        base = code(node.value)
        changes = {}
        for el in node.slice:
            s = el.slice
            if isinstance(s, cst.Slice):
                if an.counter_in(s) is not None:
                    return None  # a slice bound that changes is a new shape: no data index for it
                continue
            if an.counter_in(s.value) is None or an.is_tensor(s.value):
                continue
            text = code(s.value)
            changes[s.value] = cst.parse_expression(f"{torch}.tensor({text}, device={base}.device)")
        if not changes:
            return None
        return Fix(UNSAFE, "index with a device tensor", changes, imports)

    def visit_Call(self, node: cst.Call) -> None:
        an = self.an
        if an.loop is None:
            return
        func = node.func
        qn = an.qualname(func) or ""
        if qn in FACTORIES:
            where, args = "a size", [a for a in node.args if a.keyword is None or a.keyword.value == "size"]
        elif isinstance(func, cst.Attribute) and func.attr.value in SHAPING and an.is_tensor(func.value) \
                and not an.is_host(func.value):
            where, args = f"an argument of .{func.attr.value}()", list(node.args)
        elif qn.startswith("torch.") and qn.rsplit(".", 1)[-1] in SHAPING | {"cat", "stack"}:
            where, args = f"an argument of {qn}()", list(node.args[1:])
        elif qn.startswith("torch.") or (isinstance(func, cst.Attribute) and an.is_tensor(func.value)):
            where = "a dim"
            args = [a for a in node.args if a.keyword is not None and a.keyword.value in SHAPING_KEYWORDS]
        else:
            return
        for arg in args:
            if an.is_tensor(arg.value):
                continue
            name = an.counter_in(arg.value)
            if name is not None:
                self._report(node, name, where)
                return

    def _report(self, node: cst.CSTNode, name: str, where: str, fix=None) -> None:
        loop = self.an.counter_loop(name)
        if loop is None:
            return

        def when():
            return f"the loop {loop.step_reason}" if loop.is_step_loop else None

        self.report(node, MESSAGE.format(name=name, where=where, why="{why}"), fix=fix, when=when)


def _walk_body(node: cst.CSTNode):
    """Every node below ``node``, not entering nested functions, classes or lambdas."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(reversed(n.children))


def _offset(expr: cst.BaseExpression, i: str):
    """0 for ``i``, c for ``i + c`` / ``c + i`` with a non-negative integer literal c."""
    if isinstance(expr, cst.Name) and expr.value == i:
        return 0
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        for a, b in ((expr.left, expr.right), (expr.right, expr.left)):
            if isinstance(a, cst.Name) and a.value == i and isinstance(b, cst.Integer):
                return b.evaluated_value
    return None


def _assigned_names(body: cst.CSTNode):
    for n in _walk_body(body):
        if isinstance(n, cst.AssignTarget):
            yield from (t for t in _walk_body(n.target) if isinstance(t, cst.Name))
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)) and isinstance(n.target, cst.Name):
            yield n.target
