"""What HPU001 reads from an expression: the fill value of a filling call, the `self.` attributes
of an index, the element read a value is, and whether a container is a Python list of objects."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.int_arith import _arith_of
from hpulint.analysis.values import DATA, HOST, SCALAR, SEQ_TENSOR, SIZE, TUPLE

FILLED = frozenset({"torch.full", "torch.full_like"})


def fill_value(qn: str, func: cst.BaseExpression, node: cst.Call) -> Optional[cst.Arg]:
    """The fill-value argument of `torch.full(size, v)`, `torch.full_like(x, v)`, `x.new_full(size, v)`
    or `x.fill_(v)`, if the call is one of those."""
    if qn in FILLED:
        position = 1
    elif type(func) is cst.Attribute and func.attr.value in ("new_full", "fill_") and not qn.startswith("torch."):
        position = 1 if func.attr.value == "new_full" else 0
    else:
        return None
    for a in node.args:
        if a.keyword is not None and a.keyword.value == "fill_value":
            return a
    positional = [a for a in node.args if a.keyword is None and not a.star]
    return positional[position] if len(positional) > position else None


def self_attributes(expr: cst.BaseExpression) -> list:
    """`x` of every `self.x` in an index expression (`self.step_index + 1`)."""
    out = []
    stack = [expr]
    while stack:
        n = stack.pop()
        if type(n) is cst.Attribute and type(n.value) is cst.Name and n.value.value == "self":
            out.append(n.attr.value)
        elif type(n) is cst.BinaryOperation:
            stack += (n.left, n.right)
        elif type(n) is cst.UnaryOperation:
            stack.append(n.expression)
    return out


def list_of_objects(res) -> bool:
    """A Python list built of things that are not numbers (`noise_latents.append(latent)`):
    indexing it picks an object on the host, and a tensor picked so is no graph constant."""
    if res.kind == SEQ_TENSOR:
        return True
    return res.kind == TUPLE and bool(res.parts) and not any(p.kind in (SCALAR, DATA, SIZE, HOST) for p in res.parts)


def element_of(expr: cst.BaseExpression) -> Optional[cst.Subscript]:
    """The one element read a value is: `sched[it]`, or number arithmetic on it
    (`(a + ts[i] / (n - 1) * (b - a)) ** rho`); None for anything else."""
    if type(expr) is cst.Subscript:
        return expr if all(type(e.slice) is cst.Index for e in expr.slice) else None
    if type(expr) not in (cst.BinaryOperation, cst.UnaryOperation) or \
            not _arith_of(expr, (cst.Name, cst.Integer, cst.Float, cst.Subscript), ("min", "max", "abs"), False):
        return None
    reads = []
    stack = [expr]
    while stack:
        x = stack.pop()
        if type(x) is cst.Subscript:
            reads.append(x)
        elif type(x) is cst.BinaryOperation:
            stack += (x.left, x.right)
        elif type(x) is cst.UnaryOperation:
            stack.append(x.expression)
        elif type(x) is cst.Call:
            stack += [a.value for a in x.args]
    return element_of(reads[0]) if len(reads) == 1 else None

def listed(node: cst.BaseExpression) -> list:
    """The elements of `[a, b]`, `(a, b)` and `[a] * n`."""
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.Multiply:
        node = node.left if type(node.left) in (cst.List, cst.Tuple) else node.right
    if type(node) in (cst.List, cst.Tuple):
        return [el.value for el in node.elements if type(el) is not cst.StarredElement]
    return []
