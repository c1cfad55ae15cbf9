"""What a print or log call in a compiled region reads, for HPU012: the values it formats (its
positional arguments and the expressions inside its f-strings), whether an argument reads a tensor
itself (`.item()`, `float(t)`), and whether a statement is only a print or a logger call."""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import child_nodes
from hpulint.rules.compile_calls import is_logger

CONVERSIONS = frozenset({"float", "int", "bool"})
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log"})


def is_log_statement(an, stmt) -> bool:
    """A statement that is only a print(...) or a logger call."""
    if type(stmt) is not cst.SimpleStatementLine or len(stmt.body) != 1 or type(stmt.body[0]) is not cst.Expr:
        return False
    call = stmt.body[0].value
    if type(call) is not cst.Call:
        return False
    f = call.func
    if type(f) is cst.Name:
        return f.value == "print" and "print" not in an.bound_names()
    return type(f) is cst.Attribute and f.attr.value in LOG_METHODS and is_logger(an, f.value)


def printed(an, call: cst.Call) -> list:
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
        if type(n) is cst.FormattedString:
            for p in n.parts:
                if type(p) is cst.FormattedStringExpression:
                    yield p.expression
        elif type(n) is cst.ConcatenatedString:
            stack += (n.left, n.right)
        elif type(n) is cst.BinaryOperation:
            stack += (n.left, n.right)


def has_read(node: cst.BaseExpression) -> bool:
    """The expression calls `.item()`/`.tolist()`/`.numpy()` or float()/int()/bool() itself."""
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Call:
            f = n.func
            if (type(f) is cst.Attribute and f.attr.value in ("item", "tolist", "numpy") and not n.args) or \
                    (type(f) is cst.Name and f.value in CONVERSIONS and len(n.args) == 1):
                return True
        stack += child_nodes(n)
    return False
