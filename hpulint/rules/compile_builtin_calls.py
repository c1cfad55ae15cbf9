"""Python builtins and standard-library calls Dynamo does not trace, for HPU012.

Measured on torch 2.13 (CPU, ``eager`` backend; the counts are in tests/test_compile_kinds21.py):
inside a compiled region each one is a graph break at its line.

- ``eval(source, globals, locals)`` / ``exec(...)`` given a namespace (a loss formula from the
  config evaluated against the computed terms): "Dynamo does not know how to trace builtin operator
  `eval` with argument types ['str', 'dict', 'dict']". ``eval`` of a constant string alone is folded
  (no break), and a formula turned into a function once in the eager code (``eval("lambda ce, kd: "
  + formula)``) is traced when the region calls it;
- ``str(t)`` / ``repr(t)`` of a tensor, and ``"..." % t`` (a status line with the loss in it): the
  text of a tensor is its value, read to the host. ``str(x.shape)``, ``str(t.dtype)`` and an f-string
  or ``str.format`` of a 0-d tensor are traced (no break);
- any ``cmath`` function (``cmath.exp(1j * phi)``, ``cmath.rect``, ``cmath.phase``), even of constants:
  Dynamo has no handler for the ``cmath`` builtins; ``torch.polar(...)`` or ``torch.exp(1j * phi)`` of
  a 0-d tensor ``phi`` is traced.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code

EVAL_WHY = ("Dynamo does not trace the builtin `{name}()` given a namespace (\"Dynamo does not know how to trace "
            "builtin operator `{name}`\")")
FIX_EVAL = ("Turn the text into a function once in the eager code (`combine = eval(\"lambda ce, kd: \" + formula)`) "
            "and call that in the compiled function, or write the expression out")
TEXT_WHY = "The text of a tensor is its value: Dynamo reads it to the host to build the string"
FIX_TEXT = ("Return the tensor and build the string in the eager code around the compiled call, on the steps "
            "that show it")
CMATH_WHY = "Dynamo does not trace the `cmath` module's functions (C builtins it has no handler for), even of constants"
FIX_CMATH = ("Compute it with torch in the graph (`torch.polar(torch.ones_like(phi), phi)` or `torch.exp(1j * phi)` "
             "with `phi` a 0-d tensor), or compute the Python number in the eager code and pass it in")
TEXT_CALLS = frozenset({"str", "repr"})


def builtin_call(an, node: cst.Call, is_tensor) -> Optional[tuple]:
    """(what is said, why, fix, check) for `eval`/`exec` with a namespace, `str`/`repr` of a
    tensor, or a `cmath` call; None otherwise."""
    func = node.func
    if type(func) is cst.Name and func.value not in an.bound_names():
        name = func.value
        if name in ("eval", "exec") and (len(node.args) > 1 or any(a.keyword is not None for a in node.args)):
            return f"`{name}(...)`", EVAL_WHY.format(name=name), FIX_EVAL, lambda: True
        if name in TEXT_CALLS and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
            v = an.value(node.args[0].value)
            return f"`{code(node)}`", TEXT_WHY, FIX_TEXT, lambda: is_tensor(an, v)
        return None
    qn = an.qualname(func) or ""
    if qn.startswith("cmath.") and qn.count(".") == 1:
        return f"`{qn}(...)`", CMATH_WHY, FIX_CMATH, lambda: True
    return None


def percent_text(an, node: cst.BinaryOperation, is_tensor) -> Optional[tuple]:
    """(what is said, why, fix, check) for `"..." % t` with a tensor `t` (or a tuple holding one)."""
    if type(node.operator) is not cst.Modulo or type(node.left) not in (cst.SimpleString, cst.ConcatenatedString):
        return None
    right = node.right
    parts = [e.value for e in right.elements] if type(right) is cst.Tuple else [right]
    values = [an.value(p) for p in parts]
    return "`\"...\" % ...` of a tensor", TEXT_WHY, FIX_TEXT, lambda: any(is_tensor(an, v) for v in values)
