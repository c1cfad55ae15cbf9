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
  a 0-d tensor ``phi`` is traced;
- ``dir(obj)`` (an attribute probe, ``"adapter" in dir(self)``): "Dynamo does not know how to trace
  builtin operator `dir`"; ``hasattr(self, "adapter")`` is traced;
- a frame read, ``sys._getframe(k)`` (the caller's name in a helper: ``.f_code.co_qualname``),
  ``inspect.currentframe()`` or ``inspect.stack()``: Dynamo has no frame objects to give;
- ``warnings.simplefilter(...)`` / ``warnings.filterwarnings(...)`` (the filter list is global
  state): a break at the call, also inside ``with warnings.catch_warnings():`` (the ``with`` alone,
  its body a tensor op, is traced: no break).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code
from hpulint.rules.compile_stdlib_calls import stdlib_call

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
GLOBALS_WHY = ("Dynamo does not trace the builtin `globals()` (\"Dynamo does not know how to trace builtin operator "
               "`globals`\")")
FIX_GLOBALS = ("Resolve the name once in `__init__` (or where the config is read) and keep the function on the module "
               "(`self.act = ACTIVATIONS[name]`, a dict of the candidates), or pass it in")
DIR_WHY = "Dynamo does not trace the builtin `dir()` (\"Dynamo does not know how to trace builtin operator `dir`\")"
FIX_DIR = ("Probe the attribute with `hasattr(self, name)` (traced), or decide once in `__init__` (or where the "
           "attribute is set) and keep a flag")
FRAMES = frozenset({"sys._getframe", "inspect.currentframe", "inspect.stack"})
FRAME_WHY = "Dynamo cannot give Python frame objects to the traced code (`{name}()` is not traced)"
FIX_FRAME = ("Pass the name in (`observe(t, \"stem\")`), or read it once in the eager code; a frame read has "
             "nothing to add to a graph")
FILTERS = frozenset({"warnings.simplefilter", "warnings.filterwarnings"})
FILTER_WHY = "Dynamo does not trace a change of the warnings filters (`{name}()`, global state)"
FIX_FILTER = ("Set the filter once in the eager code (at import, or around the compiled call: "
              "`with warnings.catch_warnings(): warnings.simplefilter(\"ignore\"); out = compiled(x)`)")


def builtin_call(an, node: cst.Call, is_tensor) -> Optional[tuple]:
    """(what is said, why, fix, check) for `eval`/`exec` with a namespace, `str`/`repr` of a
    tensor, `dir(obj)`, a frame read, a change of the warnings filters, or a `cmath` call; None
    otherwise."""
    func = node.func
    if type(func) is cst.Name and func.value not in an.bound_names():
        name = func.value
        if name in ("eval", "exec") and (len(node.args) > 1 or any(a.keyword is not None for a in node.args)):
            return f"`{name}(...)`", EVAL_WHY.format(name=name), FIX_EVAL, lambda: True
        if name == "globals" and not node.args:
            return "`globals()`", GLOBALS_WHY, FIX_GLOBALS, lambda: True
        if name == "dir" and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
            return f"`{code(node)}`", DIR_WHY, FIX_DIR, lambda: True
        if name in TEXT_CALLS and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
            v = an.value(node.args[0].value)
            return f"`{code(node)}`", TEXT_WHY, FIX_TEXT, lambda: is_tensor(an, v)
        return None
    qn = an.qualname(func) or ""
    if qn in FRAMES:
        return f"`{qn}()`", FRAME_WHY.format(name=qn), FIX_FRAME, lambda: True
    if qn in FILTERS:
        return f"`{qn}(...)`", FILTER_WHY.format(name=qn), FIX_FILTER, lambda: True
    if qn.startswith("cmath.") and qn.count(".") == 1:
        return f"`{qn}(...)`", CMATH_WHY, FIX_CMATH, lambda: True
    return stdlib_call(an, node)  # the measured standard-library table (compile_stdlib_calls)


def percent_text(an, node: cst.BinaryOperation, is_tensor) -> Optional[tuple]:
    """(what is said, why, fix, check) for `"..." % t` with a tensor `t` (or a tuple holding one)."""
    if type(node.operator) is not cst.Modulo or type(node.left) not in (cst.SimpleString, cst.ConcatenatedString):
        return None
    right = node.right
    parts = [e.value for e in right.elements] if type(right) is cst.Tuple else [right]
    values = [an.value(p) for p in parts]
    return "`\"...\" % ...` of a tensor", TEXT_WHY, FIX_TEXT, lambda: any(is_tensor(an, v) for v in values)
