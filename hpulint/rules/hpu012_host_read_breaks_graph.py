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
from hpulint.rules.compile_move_read import move_read_fix
from hpulint.rules.compiled_region import (captures_scalars, compiled_why, is_compile_call, is_tensor,
                                           maybe_tensor, where)

MESSAGE = (
    "{why}, so the graph breaks here on every call (graph break: the graph ends, Python runs it, "
    "the rest compiles as another graph). {fix}"
)
READ = "Dynamo cannot trace a read of a tensor's value to the host"
UNTRACED = "Dynamo does not trace print and logging calls, whatever they print"
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
    summary = ".item()/.tolist()/float() of a tensor, print or logging inside a torch.compile'd function (graph break)"
    fix_safety = "unsafe"
    triggers = (".item(", ".tolist(", ".numpy(", "print(", "float(", "int(", "bool(", "info(", "debug(",
                "warning(", "error(", "log(")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.scalars = captures_scalars(ctx.source)
        self.module = None

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

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
                self._print(node, "logging")
            return
        if isinstance(func, cst.Name):
            if func.value in CONVERSIONS and len(node.args) == 1 and not self.scalars:
                v = an.value(node.args[0].value)
                self._report(node, f"`{func.value}()` of a tensor", FIX_SCALAR, lambda: is_tensor(an, v))
            elif func.value == "print" and "print" not in an.bound_names():
                self._print(node, "printing")

    def _print(self, node: cst.Call, verb: str) -> None:
        """print() and logging calls break the graph whatever they print (measured on 2.13)."""
        an = self.an
        if any(_has_read(a.value) for a in node.args):
            return  # print(loss.item()): the read inside is reported, one finding for the line
        vals = _printed(an, node)
        call = "print(...)" if verb == "printing" else "a logging call"

        def subject():
            if any(is_tensor(an, v) for v in vals):
                return f"{verb} a tensor", READ
            return f"`{call}`" if verb == "printing" else call, UNTRACED

        self._report(node, None, FIX_PRINT, lambda: True, subject=subject)

    def _report(self, node: cst.CSTNode, what, fix: str, check, subject=None) -> None:
        an = self.an
        fn = an.function
        stmt = an.statement
        logged = _is_log_statement(an, stmt)

        def when():
            reason = compiled_why(an, fn)
            if reason is None or not check():
                return None
            said, why = subject() if subject is not None else (what, READ)
            return f"{said} {where(fn, reason)}: {why}"

        def autofix():
            if not logged:
                return None
            return move_read_fix(self.module, stmt, fn.node,
                                 lambda d: is_compile_call(an, d.decorator) or an.qualname(d.decorator) == "torch.compile")

        self.report(node, MESSAGE.format(why="{why}", fix=fix), when=when, fix=autofix)


def _is_log_statement(an, stmt) -> bool:
    """A statement that is only a print(...) or a logger call."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Expr):
        return False
    call = stmt.body[0].value
    if not isinstance(call, cst.Call):
        return False
    f = call.func
    if isinstance(f, cst.Name):
        return f.value == "print" and "print" not in an.bound_names()
    return isinstance(f, cst.Attribute) and f.attr.value in LOG_METHODS and _is_logger(an, f.value)


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



def _has_read(node: cst.BaseExpression) -> bool:
    """The expression calls `.item()`/`.tolist()`/`.numpy()` or float()/int()/bool() itself."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Call):
            f = n.func
            if (isinstance(f, cst.Attribute) and f.attr.value in ("item", "tolist", "numpy") and not n.args) or \
                    (isinstance(f, cst.Name) and f.value in CONVERSIONS and len(n.args) == 1):
                return True
        stack += list(n.children)
    return False
