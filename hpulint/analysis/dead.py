"""Tests that never hold: branches a walk can rule out from what the function itself bound.

* a bool literal bound at the function's top level (`ignore_cache_position = True`, then
  `if ignore_cache_position is False:`), until the name is bound again;
* a name made a `torch.device` (`args.device = torch.device("hpu")`) compared with a string: a
  device never equals a string, so `args.device == "hpu"` is False from there on.

The walk (``walk_flow``) marks such a branch with ``guards.NEVER``.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import string_value


def never_holds(test: cst.BaseExpression, consts: dict) -> bool:
    """``test`` is false by the bool literals ``consts`` holds (`flag is False`, `flag == False`,
    `not flag` after `flag = True`; `flag` after `flag = False`)."""
    if type(test) is cst.Name:
        return consts.get(test.value) is False
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not and type(test.expression) is cst.Name:
        return consts.get(test.expression.value) is True
    if type(test) is cst.Comparison and len(test.comparisons) == 1 and type(test.left) is cst.Name:
        comp = test.comparisons[0]
        lit = comp.comparator
        if test.left.value in consts and type(lit) is cst.Name and lit.value in ("True", "False") \
                and type(comp.operator) in (cst.Is, cst.Equal, cst.IsNot, cst.NotEqual):
            same = consts[test.left.value] == (lit.value == "True")
            return not same if type(comp.operator) in (cst.Is, cst.Equal) else same
    return False


def dotted_key(node: cst.BaseExpression) -> Optional[str]:
    """`args.device` -> "args.device", `device` -> "device"; None for anything else."""
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute and type(node.value) in (cst.Name, cst.Attribute):
        head = dotted_key(node.value)
        return f"{head}.{node.attr.value}" if head is not None else None
    return None


def is_device_object(node: cst.BaseExpression) -> bool:
    """`torch.device(...)`: a device object, which never compares equal to a string."""
    return type(node) is cst.Call and _dotted(node.func) == "torch.device"


def equals_literal(test: cst.BaseExpression, key: str) -> Optional[str]:
    """The string ``test`` says the dotted name ``key`` equals (`args.device == "hpu"`)."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 \
            or type(test.comparisons[0].operator) is not cst.Equal:
        return None
    a, b = test.left, test.comparisons[0].comparator
    for name, lit in ((a, b), (b, a)):
        s = string_value(lit)
        if s is not None and dotted_key(name) == key:
            return s
    return None


def device_object_test(test: cst.BaseExpression, objects: dict) -> Optional[bool]:
    """True when ``test`` compares a name bound to a torch.device with a string it can no longer
    equal by `==` (the test never holds), False for `!=` (it always holds), else None."""
    hit = _device_comparison(test, objects)
    return None if hit is None else hit[2]


def why_never(test: cst.BaseExpression, objects: dict) -> str:
    """Why a test the walk marked as never holding never does, for a message."""
    hit = _device_comparison(test, objects)
    if hit is None:
        return "a bool the function bound before rules it out"
    name, lit = (cst.Module([]).code_for_node(n) for n in hit[:2])
    return (f"`{name}` was made a torch.device, and a torch.device never equals a string. "
            f"Test `{name}.type == {lit}` instead")


def _device_comparison(test: cst.BaseExpression, objects: dict) -> Optional[tuple]:
    """(name, literal, is `==`) when ``test`` compares a name bound to a torch.device with a
    string it can no longer equal."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    op = type(test.comparisons[0].operator)
    if op not in (cst.Equal, cst.NotEqual):
        return None
    a, b = test.left, test.comparisons[0].comparator
    for name, lit in ((a, b), (b, a)):
        s = string_value(lit)
        key = dotted_key(name) if s is not None else None
        if key is not None and key in objects and objects[key] in ("*", s):
            return name, lit, op is cst.Equal
    return None


def _dotted(node) -> str:
    parts = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is cst.Name:
        parts.append(node.value)
    return ".".join(reversed(parts))
