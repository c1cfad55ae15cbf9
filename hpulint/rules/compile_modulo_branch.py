"""A branch on a number argument taken modulo a constant, for HPU017 (with compile_dynamic_branch).

``if step % EMA_EVERY != 0: return`` in a compiled function called with the training step: Dynamo
makes the changing int dynamic after one recompile, then guards on the test (``Mod(step, 4) != 0``),
so the steps on the other side of it are one more graph. Measured on torch 2.13 (CPU, ``eager``
backend): a compiled teacher-EMA update called with ``step`` in ``range(12)``, testing
``step % 4 != 0`` (or ``== 0``): 3 graphs, 2 recompiles; called only with multiples of 4, 2 graphs (the
one recompile that makes the int dynamic); the test in the eager loop, the compiled update called on
those steps alone, 1 graph.

The modulus is an int literal or a module-level name bound once to one (``EMA_EVERY = 4``); the
other side of ``==``/``!=`` is a number.
"""
from __future__ import annotations

import operator
from typing import Optional

import libcst as cst

EQUALITY = {cst.Equal: operator.eq, cst.NotEqual: operator.ne}


def module_ints(module: Optional[cst.Module]) -> dict:
    """Module-level names bound once, to an int literal (`EMA_EVERY = 4`)."""
    out, seen = {}, set()
    for st in module.body if module is not None else ():
        if type(st) is not cst.SimpleStatementLine:
            continue
        for small in st.body:
            if type(small) is not cst.Assign:
                continue
            for t in small.targets:
                if type(t.target) is cst.Tuple and type(small.value) is cst.Tuple \
                        and len(t.target.elements) == len(small.value.elements):  # `BLOCK, DIM = 8, 32`
                    for el, v in zip(t.target.elements, small.value.elements):
                        if type(el.value) is cst.Name:
                            name = el.value.value
                            if name in seen:
                                out.pop(name, None)
                            elif type(v.value) is cst.Integer:
                                out[name] = int(v.value.evaluated_value)
                            seen.add(name)
                if type(t.target) is cst.Name:
                    name = t.target.value
                    if name in seen:
                        out.pop(name, None)
                    elif type(small.value) is cst.Integer:
                        out[name] = int(small.value.evaluated_value)
                    seen.add(name)
    return out


def modulo_test(test: cst.BaseExpression, params: set, ints: dict) -> Optional[tuple]:
    """(parameter, check(v) -> side) for `p % K == r` or `p % K != r` (either order), else None."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 \
            or type(test.comparisons[0].operator) not in EQUALITY:
        return None
    op = EQUALITY[type(test.comparisons[0].operator)]
    for side, other in ((test.left, test.comparisons[0].comparator), (test.comparisons[0].comparator, test.left)):
        if type(side) is not cst.BinaryOperation or type(side.operator) is not cst.Modulo \
                or type(side.left) is not cst.Name or side.left.value not in params:
            continue
        k = _int(side.right, ints)
        r = _int(other, {})
        if k is None or k == 0 or r is None:
            continue
        return side.left.value, (lambda v, k=k, r=r: op(int(v) % k, r))
    return None


def _int(node, ints: dict) -> Optional[int]:
    if type(node) is cst.Integer:
        return int(node.evaluated_value)
    if type(node) is cst.Name:
        return ints.get(node.value)
    return None
