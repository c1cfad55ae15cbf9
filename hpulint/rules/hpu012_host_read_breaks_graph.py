"""HPU012 host-read-breaks-graph: reading a tensor's value on the host inside code that
torch.compile compiles.

Sources: PyTorch docs, "torch.compile Troubleshooting" and "Working with Graph Breaks": Dynamo
cannot put a data-dependent host read (``Tensor.item()`` without ``capture_scalar_outputs``,
``tolist()``, ``print`` of a tensor) in a graph, so it ends the graph there, runs the read in
Python and compiles the rest as a resume function. Measured on torch 2.13 (docs/compile-target.md):
``.item()``/``float()``/``int()``, ``.tolist()``, ``print`` and logging of a tensor are graph
breaks; ``.cpu()`` is not (it is traced as a device copy).
"""
from __future__ import annotations

import libcst as cst

from hpulint.rules.base import Rule
from hpulint.rules.compiled_region import captures_scalars, compiled_why, is_tensor, maybe_tensor, where

MESSAGE = (
    "{what} {where}: Dynamo cannot trace a read of a tensor's value to the host, so the graph "
    "breaks here on every call (graph break: the graph ends, Python runs the read, the rest "
    "compiles as another graph). {fix}"
)
FIX_RETURN = ("Move the read out of the compiled function: return the tensor and read it in the "
              "eager code around it, on logging steps only")
FIX_SCALAR = FIX_RETURN + ", or set `torch._dynamo.config.capture_scalar_outputs = True`"
FIX_PRINT = ("Return the value and print or log it in the eager code around the compiled "
             "function (or drop the debug print)")
CONVERSIONS = frozenset({"float", "int", "bool"})
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log"})


class HostReadBreaksGraph(Rule):
    code = "HPU012"
    name = "host-read-breaks-graph"
    summary = ".item()/.tolist()/float()/print of a tensor inside a torch.compile'd function (graph break)"
    triggers = (".item(", ".tolist(", ".numpy(", "print(", "float(", "int(", "bool(", "info(", "debug(",
                "warning(", "error(", "log(")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.scalars = captures_scalars(ctx.source)

    def visit_Call(self, node: cst.Call) -> None:
        an = self.an
        fn = an.function
        if fn.kind != "function":
            return
        func = node.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            recv = an.value(func.value)
            if method == "item" and not node.args and not self.scalars:
                self._report(node, "`.item()`", FIX_SCALAR, lambda: maybe_tensor(an, recv))
            elif method in ("tolist", "numpy") and not node.args:
                self._report(node, f"`.{method}()`", FIX_RETURN, lambda: maybe_tensor(an, recv))
            elif method in LOG_METHODS and _is_logger(an, func.value):
                vals = _printed(an, node)
                self._report(node, "logging a tensor", FIX_PRINT, lambda: any(is_tensor(an, v) for v in vals))
            return
        if isinstance(func, cst.Name):
            if func.value in CONVERSIONS and len(node.args) == 1 and not self.scalars:
                v = an.value(node.args[0].value)
                self._report(node, f"`{func.value}()` of a tensor", FIX_SCALAR, lambda: is_tensor(an, v))
            elif func.value == "print" and "print" not in an.bound_names():
                vals = _printed(an, node)
                self._report(node, "printing a tensor", FIX_PRINT, lambda: any(is_tensor(an, v) for v in vals))

    def _report(self, node: cst.CSTNode, what: str, fix: str, check) -> None:
        an = self.an
        fn = an.function

        def when():
            reason = compiled_why(an, fn)
            if reason is None or not check():
                return None
            return where(fn, reason)

        self.report(node, MESSAGE.format(what=what, where="{why}", fix=fix), when=when)


def _printed(an, call: cst.Call) -> list:
    """The values a print/log call formats: its positional arguments and the expressions inside
    its f-strings."""
    out = []
    for a in call.args:
        if a.keyword is not None and a.keyword.value not in ("msg",):
            continue
        out.append(an.value(a.value))
        for part in _fstring_parts(a.value):
            out.append(an.value(part))
    return out


def _fstring_parts(node: cst.BaseExpression):
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.FormattedString):
            for p in n.parts:
                if isinstance(p, cst.FormattedStringExpression):
                    yield p.expression
        elif isinstance(n, cst.ConcatenatedString):
            stack += (n.left, n.right)
        elif isinstance(n, cst.BinaryOperation):
            stack += (n.left, n.right)


def _is_logger(an, node: cst.BaseExpression) -> bool:
    qn = an.qualname(node) or ""
    if qn == "logging":
        return True
    name = node.value if isinstance(node, cst.Name) else node.attr.value if isinstance(node, cst.Attribute) else ""
    return name in ("logger", "log", "logging", "LOGGER", "_logger", "_log")

