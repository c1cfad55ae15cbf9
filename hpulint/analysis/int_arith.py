"""Integer arithmetic the analysis recognises in source (no values involved): a step that stays a
Python int, arithmetic that plausibly stays one (counters, sizes), and a counter capped by `min`.
"""
from __future__ import annotations

import libcst as cst


def int_step(node: cst.BaseExpression) -> bool:
    """A step that stays a Python int: literals, `len(...)`, `.size(0)`/`.shape[0]` arithmetic."""
    if type(node) is cst.Integer:
        return True
    if type(node) is cst.BinaryOperation:  # `n + 1`, `k * x.size(0)`: one int step, the rest names
        sides = (node.left, node.right)
        return any(int_step(s) for s in sides) and all(type(s) is cst.Name or int_step(s) for s in sides)
    if type(node) is cst.Call:
        f = node.func
        return (type(f) is cst.Name and f.value == "len") or (type(f) is cst.Attribute and f.attr.value in ("size", "numel"))
    if type(node) is cst.Subscript and type(node.value) is cst.Attribute:
        return node.value.attr.value == "shape"
    return False


def is_int_arith(node: cst.BaseExpression) -> bool:
    """An expression that plausibly stays a Python int: arithmetic, min/max/int/abs/len, sizes."""
    return _arith_of(node, (cst.Name, cst.Integer), ("min", "max", "int", "abs", "round", "len"), True)


def clamped(node: cst.BaseExpression, counter_in) -> bool:
    """`min(gamma, total - pos - 1)`: a counter capped by a value that is not one takes at most that
    many values (near the start or the end of the run), not a new one every pass. ``counter_in``:
    the walker's ((name, the Loop or a parameter's name) or None); a parameter that may carry a
    counter from the caller is constant within the loop, so it caps the loop's counter."""
    return type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "min" \
        and len(node.args) >= 2 and any(_no_loop_counter(counter_in(a.value)) for a in node.args)


def _no_loop_counter(hit) -> bool:
    return hit is None or isinstance(hit[1], str)


def is_number_arith(node: cst.BaseExpression) -> bool:
    """Arithmetic of names and number literals (`1.0 - i / 10`, `step + 1`): a Python number when
    its names are; no call but int/float/min/max/abs/round, no tuple."""
    return _arith_of(node, (cst.Name, cst.Integer, cst.Float), ("min", "max", "int", "float", "abs", "round"),
                     False)


def _arith_of(node: cst.BaseExpression, leaves: tuple, calls: tuple, attributes: bool) -> bool:
    """Arithmetic whose leaves are ``leaves`` (and attributes, when ``attributes``: `args.n`)
    and whose only calls are the builtins ``calls``."""
    if isinstance(node, leaves):
        return True
    if type(node) is cst.BinaryOperation:
        return _arith_of(node.left, leaves, calls, attributes) and _arith_of(node.right, leaves, calls, attributes)
    if type(node) is cst.UnaryOperation:
        return type(node.operator) is not cst.Not and _arith_of(node.expression, leaves, calls, attributes)
    if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value in calls:
        return all(_arith_of(a.value, leaves, calls, attributes) for a in node.args)
    if attributes and int_step(node) and type(node) is not cst.BinaryOperation:
        return True  # a size: `prompt.shape[1] + block * n`, `x.size(1) + i`
    return attributes and type(node) is cst.Attribute
