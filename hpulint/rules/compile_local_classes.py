"""A batch whose class is made anew by every call of the function that builds it, given to a
compiled function in a loop, for HPU017.

Measured on torch 2.13 (CPU, ``eager`` backend; the counts are in tests/test_compile_kinds21.py):
a collate function that declares ``Batch = namedtuple("Batch", [...])`` (or a ``class Batch``
statement, or a ``@dataclass``) in its body and returns a ``Batch(...)`` makes a new class on every
call; Dynamo guards on the type of the argument, so each batch recompiles the compiled function (12
batches: 8 graphs, then `recompile_limit` and an eager fallback), also when the function unpacks the
batch (``x, y = batch``). The same namedtuple declared once at module level, a
``types.SimpleNamespace`` batch, or the batch's fields passed as tensors: one graph.

For HPU012: a ``class`` statement that runs inside the compiled region (in the compiled function or
in a function it calls, e.g. a ``grad_reverse(x, alpha)`` helper declaring its ``autograd.Function``
around ``alpha``) is a graph break at the statement ("Invalid call to __build_class__": "Cannot trace
class definition"), measured for a plain class, a class with a class attribute only and an
``autograd.Function`` subclass; each call also makes a new class object the code after the break is
guarded on (c458: 4 breaks, 7 recompiles). Declared once at module level, or made by a factory called
in ``__init__``: one graph.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code

FACTORIES = frozenset({"collections.namedtuple", "namedtuple", "typing.NamedTuple", "NamedTuple",
                       "dataclasses.make_dataclass", "make_dataclass"})
MESSAGE = (
    "`{arg}` is a `{cls}` from `{maker}()`, which declares the class `{cls}` in its body, so every call makes a new "
    "class: Dynamo guards on the argument's type, so every call of the compiled `{name}` recompiles, and after "
    "`recompile_limit` ({limit}) it runs the function eagerly for the rest of the run (eager fallback). Declare "
    "`{cls}` once at module level (or pass the fields as tensors)"
)


CLASS_WHY = ("Dynamo does not trace a `class` statement (\"Invalid call to __build_class__\": \"Cannot trace class "
             "definition\"); each call also makes a new class object, which the code after the break is guarded on")
FIX_CLASS = ("Declare the class once at module level (pass what it closed over as an argument: for an "
             "`autograd.Function`, to `apply` and keep it on `ctx`), or make it once in `__init__`")


def class_statement(node: cst.ClassDef) -> tuple:
    """(what is said, why, fix, check) for a class statement in a function of the compiled region."""
    bases = [code(b.value) for b in node.bases]
    kind = " (an `autograd.Function`)" if any(b.endswith("Function") for b in bases) else ""
    return f"the `class {node.name.value}` statement{kind}", CLASS_WHY, FIX_CLASS, lambda: True


def local_class_argument(rule, call: cst.Call, callee: str, loop) -> Optional[str]:
    """The message for a call of a compiled function in a loop given an instance of a class that
    the function of the file which makes it declares on every call, or None."""
    for a in call.args:
        expr = a.value
        made = expr
        if type(expr) is cst.Name:
            made = rule.value_in_loop(expr.value, loop)
        if type(made) is not cst.Call or type(made.func) is not cst.Name or made.func.value not in rule.defs:
            continue
        cls = _declared_and_returned(rule.an, rule.defs[made.func.value])
        if cls is not None:
            return MESSAGE.format(arg=code(expr), cls=cls, maker=made.func.value, name=callee, limit=rule.limit)
    return None


def _declared_and_returned(an, fn: cst.FunctionDef) -> Optional[str]:
    """The class the function declares in its own body (a class statement or `X = namedtuple(...)`)
    and returns an instance of (`return X(...)`), or None."""
    declared = set()
    for st in fn.body.body:
        if type(st) is cst.ClassDef:
            declared.add(st.name.value)
        elif type(st) is cst.SimpleStatementLine:
            for small in st.body:
                if type(small) is cst.Assign and type(small.value) is cst.Call \
                        and (an.qualname(small.value.func) or "") in FACTORIES:
                    declared |= {t.target.value for t in small.targets if type(t.target) is cst.Name}
                elif type(small) is cst.Return and type(small.value) is cst.Call \
                        and type(small.value.func) is cst.Name and small.value.func.value in declared:
                    return small.value.func.value
    return None
