"""Forms of an argument whose value changes with a loop counter, for HPU017 (syntax only): a string
built from the counter, a list or tuple whose length follows it, a tensor cut into as many pieces
as its size allows."""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import child_nodes
from hpulint.rules.compiled_region import names_in


def _length_of(expr: cst.BaseExpression, counters: dict) -> bool:
    """A list or tuple whose length follows a loop counter: `(1,) * k`, `(2, 3) + (1,) * k`,
    `list(range(n))`, `[0 for _ in range(n)]`."""
    if type(expr) is cst.BinaryOperation:
        if type(expr.operator) is cst.Multiply:
            for seq, times in ((expr.left, expr.right), (expr.right, expr.left)):
                if type(seq) in (cst.List, cst.Tuple) and any(n in counters for n in names_in(times)):
                    return True
        if type(expr.operator) is cst.Add:
            return _length_of(expr.left, counters) or _length_of(expr.right, counters)
        return False
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value in ("list", "tuple") \
            and len(expr.args) == 1:
        inner = expr.args[0].value
        if type(inner) is cst.GeneratorExp:
            inner = cst.ListComp(elt=inner.elt, for_in=inner.for_in)
        return _range_of(inner, counters) or _length_of(inner, counters)
    if type(expr) is cst.ListComp and expr.for_in.inner_for_in is None and not expr.for_in.ifs:
        return _range_of(expr.for_in.iter, counters)
    return False


SPLITS = ("split", "unbind")  # not chunk/tensor_split(n): n pieces whatever the size


def _split_of(expr: cst.BaseExpression):
    """The tensor that `x.split(k)`, `x.unbind()`, `torch.split(x, k)` (or `list()`/`tuple()` of
    one) cuts into as many pieces as its size allows, else None."""
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value in ("list", "tuple") \
            and len(expr.args) == 1:
        expr = expr.args[0].value
    if type(expr) is not cst.Call or type(expr.func) is not cst.Attribute or expr.func.attr.value not in SPLITS:
        return None
    recv = expr.func.value
    if type(recv) is cst.Name and recv.value == "torch":
        return expr.args[0].value if expr.args else None
    return recv


def _range_of(expr: cst.BaseExpression, counters: dict) -> bool:
    return type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "range" \
        and any(n in counters for n in names_in(expr))


def _string_of(expr: cst.BaseExpression, counters: dict) -> bool:
    """A string built from a loop counter: an f-string, str(i), "..." + str(i), "...".format(i), "%d" % i,
    or either branch of a conditional expression."""
    if type(expr) is cst.IfExp:
        return _string_of(expr.body, counters) or _string_of(expr.orelse, counters)
    if type(expr) is cst.FormattedString:
        return any(type(p) is cst.FormattedStringExpression and any(n in counters for n in names_in(p.expression))
                   for p in expr.parts)
    if type(expr) is cst.Call:
        f = expr.func
        if type(f) is cst.Name and f.value == "str":
            return any(n in counters for n in names_in(expr))
        if type(f) is cst.Attribute and f.attr.value == "format" and type(f.value) is cst.SimpleString:
            return any(n in counters for n in names_in(expr))
    if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.Add, cst.Multiply, cst.Modulo):
        if _string_of(expr.left, counters) or _string_of(expr.right, counters):
            return True
        literal = any(type(side) in (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
                                     for side in (expr.left, expr.right))
        return literal and any(n in counters for n in names_in(expr))
    return False


def _has_float(expr: cst.BaseExpression) -> bool:
    stack = [expr]
    while stack:
        n = stack.pop()
        if type(n) is cst.Float or (type(n) is cst.BinaryOperation and type(n.operator) is cst.Divide):
            return True
        stack += child_nodes(n)
    return False
