"""A string built from an int argument that changes between calls, for HPU012: ``getattr(self,
f"head_{task}")`` in a compiled region called with ``task = step % 4``.

Dynamo makes a changing int argument dynamic after one recompile (automatic dynamic); from then on
the int is a symbol, and formatting it into a string is a graph break ("BUILD_STRING type error:
Format string part type is not correct", and the same for ``str(n)`` and ``"{}".format(n)``).
Measured on torch 2.13 (CPU, ``eager`` backend): a compiled module picking its head with
``getattr(self, f"out_{which}")``, called with ``step % 3`` over 6 steps: a break at the f-string, 1
recompile (the int made dynamic); the same with ``"out_" + str(which)`` and ``"out_{}".format(which)``:
a break there too; called with the same int every step: 1 graph, no break; a compiled function
tagging ``f"layer{k}"`` for ``k`` in ``[1, 2, 3, 4]``: a break at the f-string.

The string is built in the compiled function, or in a function of its region with a parameter of
the same name (``self.head_for(task)``); the argument is made from the loop's counters with int
arithmetic (``step % 4``, ``k`` of ``for k in [1, 2, 3, 4]``).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import bound_arguments, code
from hpulint.rules.compile_dynamic_branch import compiled_def
from hpulint.rules.compile_modulo_branch import module_ints
from hpulint.rules.compiled_region import names_in

WHY = ("Dynamo makes an int argument that changes between calls dynamic after one recompile, and a "
       "string cannot be built from the dynamic int (\"BUILD_STRING type error\"): `{arg}` gets {how}")
FIX = ("Pick what the string names without formatting the int in the compiled code: keep the parts in an "
       "`nn.ModuleList` or stacked weights indexed by a tensor, or make the choice in the eager caller and "
       "call one compiled function per part")


def formatted_names(node: cst.CSTNode) -> list:
    """Names formatted into a string: `f"head_{task}"`, `str(task)`, `"head_{}".format(task)`."""
    if type(node) is cst.FormattedString:
        return [p.expression.value for p in node.parts
                if type(p) is cst.FormattedStringExpression and type(p.expression) is cst.Name]
    if type(node) is cst.Call and len(node.args) == 1 and type(node.func) is cst.Name and node.func.value == "str" \
            and type(node.args[0].value) is cst.Name:
        return [node.args[0].value.value]
    if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "format" \
            and type(node.func.value) is cst.SimpleString:
        return [a.value.value for a in node.args if a.keyword is None and not a.star and type(a.value) is cst.Name]
    return []


def changing_int(rule, fn, name: str, compiled: set) -> Optional[str]:
    """How the int the calls of a compiled callable give ``name`` changes from one call to the next (a
    parameter of the compiled function ``fn``, or of a function of its region with the same name), or None."""
    for call, callee, loop, counters in rule.calls:
        if callee not in compiled:
            continue
        fdef, skip = compiled_def(rule, callee)
        if fdef is None:
            continue
        params = [p.name.value for p in fdef.params.params][skip:]
        if name not in params or (fn.node is not fdef and name not in (fn.params or ())):
            continue
        for param, arg in bound_arguments(call, params) or ():
            if param != name:
                continue
            made = rule.value_in_loop(arg.value, loop) if type(arg) is cst.Name else None
            made = made if made is not None else arg
            if rule.counters_of(made, loop, counters) and _int_of(made, counters, module_ints(rule.module)):
                said = f"`{code(made)}`" + (f" (`{code(arg)}`)" if made is not arg else "")
                return f"{said} at `{code(call)}`, a new int as the loop goes on"
    return None


def _int_of(expr: cst.BaseExpression, counters: dict, ints: dict) -> bool:
    """An int made of loop counters, module-level ints and int literals (`step % NUM_TASKS`, `k`)."""
    stack = [expr]
    while stack:
        n = stack.pop()
        if type(n) is cst.BinaryOperation and type(n.operator) is not cst.Divide:
            stack += (n.left, n.right)
        elif type(n) is cst.UnaryOperation:
            stack.append(n.expression)
        elif type(n) not in (cst.Name, cst.Integer) or (type(n) is cst.Name and n.value not in counters
                                                         and n.value not in ints):
            return False
    return any(n in counters for n in names_in(expr))
