"""Host readers: a project function whose whole body returns a host copy of one of its parameters
(`def to_cpu(tensor): return tensor.detach().cpu()`). The copy waits for the device where the
function is called with a device tensor, so that is where a user wants it reported: at each call
in hot code, not once in the helper that every caller shares."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import string_value

# methods that copy a tensor to the host, with how a message names them
_READS = {"cpu": "`.cpu()`", "item": "`.item()`", "tolist": "`.tolist()`", "numpy": "`.numpy()`"}
# methods a chain may hold around the copy without changing what it reads
_KEEPS = frozenset({"detach", "clone", "float", "double", "long", "int", "contiguous", "squeeze", "flatten",
                    "view", "reshape"})
_CONVERSIONS = frozenset({"float", "int", "bool"})


def host_read(node: cst.FunctionDef, params: list) -> Optional[list]:
    """[parameter, what] when ``node``'s body (after a docstring) is one `return` of a host copy of
    a parameter: `return x.detach().cpu()`, `return t.item()`, `return float(x)`,
    `return x.to("cpu").numpy()`; None otherwise."""
    if type(node) is not cst.FunctionDef:
        return None  # (a lambda is mostly handed to `map`/`apply_to_collection`: read where it is)
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    stmts = [s for s in body if not _is_docstring(s)]
    if len(stmts) != 1 or type(stmts[0]) is not cst.SimpleStatementLine or len(stmts[0].body) != 1:
        return None
    ret = stmts[0].body[0]
    if type(ret) is not cst.Return or ret.value is None:
        return None
    return _read_of(ret.value, set(params))


def _read_of(expr: cst.BaseExpression, params: set) -> Optional[list]:
    what = None
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value in _CONVERSIONS \
            and len(expr.args) == 1:
        what, expr = f"`{expr.func.value}()`", expr.args[0].value
    while True:
        if type(expr) is cst.Attribute and expr.attr.value == "data":
            expr = expr.value
            continue
        if type(expr) is not cst.Call or type(expr.func) is not cst.Attribute:
            break
        method = expr.func.attr.value
        if method in _READS and not expr.args:
            what = _READS[method] if method == "cpu" or what is None else what
        elif method == "to" and len(expr.args) == 1 and string_value(expr.args[0].value) == "cpu":
            what = '`.to("cpu")`'
        elif method not in _KEEPS:
            return None
        expr = expr.func.value
    if what is None or type(expr) is not cst.Name or expr.value not in params:
        return None
    return [expr.value, what]


def _is_docstring(stmt) -> bool:
    return type(stmt) is cst.SimpleStatementLine and len(stmt.body) == 1 and type(stmt.body[0]) is cst.Expr \
        and type(stmt.body[0].value) in (cst.SimpleString, cst.ConcatenatedString)
