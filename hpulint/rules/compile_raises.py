"""An exception raised on every call of the compiled region and caught around the compiled call,
for HPU012.

Measured on torch 2.13 (CPU, ``eager`` backend; the counts are in tests/test_compile_kinds21.py): a
forward hook that stores a block's output and raises ``StopForward`` to cut the compiled backbone
short (``try: cbackbone(x) except StopForward: pass``) breaks the graph at the ``raise`` (2 breaks,
nothing compiled), and so does a compiled function that hands its result out with ``raise
Done(y)``. Dynamo does not break on a ``raise`` it does not reach (a shape check under an ``if``
that the inputs never take), nor on one the region catches itself (``try: helper(y) except Stop:``
inside the compiled function: traced). So the ``raise`` is reported when it is a statement of the
function's own body (it runs on every call) and its exception is caught by an ``except`` of code
outside the compiled region.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

RAISE_WHY = ("`{cls}` is raised on every call and caught outside the compiled region: Dynamo cannot trace an "
             "exception that leaves the region")
FIX_RAISE = ("Return the value instead of raising it; to stop a model early, compile only the part that runs "
             "(`torch.compile(backbone[:k])`) and let the hook just store the output")


class Raises:
    def __init__(self) -> None:
        self.handlers: list = []  # (function scope, names an `except` catches)

    def handler(self, an, node: cst.ExceptHandler) -> None:
        t = node.type
        names = [e.value for e in t.elements] if type(t) is cst.Tuple else [t] if t is not None else []
        caught = {n.value if type(n) is cst.Name else n.attr.value for n in names
                  if type(n) in (cst.Name, cst.Attribute)}
        if caught:
            self.handlers.append((an.function, caught))

    def raised(self, an, node: cst.Raise) -> Optional[str]:
        """The class a `raise` of the function's own body raises (`raise Stop`, `raise Stop(x)`),
        when the function is a plain function (not a generator or context manager); None otherwise."""
        fn = an.function
        exc = node.exc.func if type(node.exc) is cst.Call else node.exc
        if fn.kind != "function" or type(fn.node) is not cst.FunctionDef or type(exc) is not cst.Name:
            return None
        if not any(type(st) is cst.SimpleStatementLine and any(s is node for s in st.body)
                   for st in fn.node.body.body):
            return None  # under an `if`, a loop or a `try`: not every call
        return exc.value

    def caught_outside(self, name: str, in_region) -> bool:
        """An `except` naming the class in code that is not compiled (``in_region(scope)``)."""
        return any(name in caught and not in_region(scope) for scope, caught in self.handlers)
