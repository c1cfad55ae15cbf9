"""Tests under which code runs on few passes of its loop, whatever its counter: a block that ends
the run (`sys.exit`, `raise`) or the step loop (`return`, `break` out of it), a body that fills
what its test asks for (`if cache is None: cache = ...`), a print bounded by a count its branch
bumps (`if shown < 5: shown += 1`). The walk asks them when it enters an `if` (see
:mod:`hpulint.analysis.guards` for logging intervals and device predicates).
"""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import child_nodes


_EXITS = frozenset({"exit", "quit", "sys.exit", "os._exit"})


def ends_the_run(body: cst.BaseSuite) -> bool:
    """Does the block end by stopping the program or raising (`print(...); sys.exit(1)`)? Then it
    runs at most once: what it reads is read on the failing step only."""
    stmts = body.body if isinstance(body, cst.IndentedBlock) else [body]
    if not stmts or type(stmts[-1]) not in (cst.SimpleStatementLine, cst.SimpleStatementSuite):
        return False
    last = stmts[-1].body[-1] if stmts[-1].body else None
    if type(last) is cst.Raise:
        ends = True
    elif type(last) is cst.Expr and type(last.value) is cst.Call:
        func = last.value.func
        name = func.value if type(func) is cst.Name else (
            f"{func.value.value}.{func.attr.value}" if type(func) is cst.Attribute and type(func.value) is cst.Name
            else "")
        ends = name in _EXITS
    else:
        ends = False
    # (the search of the whole block last: most blocks end some other way)
    # `if last_stage: ... return loss ... raise NotImplementedError`: most paths return
    return ends and not _leaves_normally(body)


def exits_loop(body: cst.BaseSuite) -> Optional[str]:
    """"return" or "break" when the block ends with one (and holds no `continue`): inside a step
    loop it runs on the last pass only (`if step > total_steps: print(...); return`)."""
    stmts = body.body if isinstance(body, cst.IndentedBlock) else [body]
    if not stmts or type(stmts[-1]) not in (cst.SimpleStatementLine, cst.SimpleStatementSuite) or not stmts[-1].body:
        return None
    last = stmts[-1].body[-1]
    kind = "return" if type(last) is cst.Return else "break" if type(last) is cst.Break else None
    if kind is None:
        return None
    stack = [body]
    while stack:
        n = stack.pop()
        if type(n) is cst.Continue:
            return None
        if type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While):
            continue
        stack.extend(child_nodes(n))
    return kind


def _leaves_normally(body: cst.CSTNode) -> bool:
    """Does a `return`, `break` or `continue` (outside nested functions) let a path leave the block?"""
    stack = [body]
    while stack:
        n = stack.pop()
        if type(n) in (cst.Return, cst.Break, cst.Continue):
            return True
        if type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        stack.extend(child_nodes(n))
    return False


def bounded_by_count(node: cst.If) -> bool:
    """`if not ok and printed < 5: printed += 1; print(...)`: a count the body bumps, compared with
    a literal bound, lets the body run a few times in the whole run (an `and` needs one such
    operand)."""
    test, operands = node.test, []
    while type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        operands.append(test.right)
        test = test.left
    operands.append(test)
    bumped = set()
    for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if type(small) is cst.AugAssign and type(small.operator) is cst.AddAssign \
                    and type(small.value) is cst.Integer:
                bumped.add(_plain_dotted(small.target))
    for op in operands:
        if type(op) is cst.Comparison and len(op.comparisons) == 1 \
                and type(op.comparisons[0].operator) in (cst.LessThan, cst.LessThanEqual) \
                and type(op.comparisons[0].comparator) is cst.Integer and _plain_dotted(op.left) in bumped - {None}:
            return True
    return False


def fills_once(node: cst.If, loop: Optional[cst.CSTNode], function: cst.CSTNode) -> bool:
    """`if preds is None: preds = ...` in a loop, `if self.cache is None: self.cache = ...` (or
    `self._init_cache()`) in a method: the body fills what the test asks for, so it runs on the
    first pass (the first call) only, unless the loop (the method) sets it back to None. Also
    `if len(preds) == 0:` (or `if not preds:`) in a loop whose body appends to the list and which
    never empties it again."""
    test = node.test
    empty = _emptiness_of(test)
    if empty is not None:
        return loop is not None and _appends_to(node, empty) and not _sets_again(loop, empty, node, emptied=True)
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Is)
            and _is_none(test.comparisons[0].comparator)):
        return False
    key = _plain_dotted(test.left)
    if key is None:
        return False
    is_attr = key.startswith("self.")
    if not is_attr and (not isinstance(test.left, cst.Name) or loop is None):
        return False
    attr = key.rsplit(".", 1)[-1].lstrip("_")
    init = re.compile(rf"^_?(?:init|set|setup|build|make|create|compute)_*_?{re.escape(attr)}$")
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    fills = False
    for stmt in body:
        for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and not _is_none(small.value) and any(
                    _plain_dotted(t.target) in (key, key.replace(".", "._", 1) if is_attr else key)
                    for t in small.targets):
                fills = True
            elif (is_attr and isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
                  and (_plain_dotted(small.value.func) or "").startswith("self.")
                  and init.match(small.value.func.attr.value)):
                fills = True
    return fills and not _sets_again(loop if loop is not None and not is_attr else function, key, node)


def _emptiness_of(test: cst.BaseExpression) -> Optional[str]:
    """`len(preds) == 0` or `not preds`: the name whose emptiness is tested, else None."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) \
            and isinstance(test.expression, cst.Name):
        return test.expression.value
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, cst.Equal) \
            and isinstance(test.comparisons[0].comparator, cst.Integer) and test.comparisons[0].comparator.value == "0" \
            and isinstance(test.left, cst.Call) and isinstance(test.left.func, cst.Name) \
            and test.left.func.value == "len" and len(test.left.args) == 1 and isinstance(test.left.args[0].value, cst.Name):
        return test.left.args[0].value.value
    return None


def _appends_to(node: cst.If, name: str) -> bool:
    """The branch's body appends to the list ``name`` (`all_preds.append(...)`): once filled, the
    emptiness test fails on every later pass."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return any(isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
               and _plain_dotted(small.value.func) in (f"{name}.append", f"{name}.extend", f"{name}.insert")
               for stmt in body if isinstance(stmt, cst.SimpleStatementLine) for small in stmt.body)


def _is_none(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _plain_dotted(node) -> Optional[str]:
    """`a`, `self.a`, `self._a`: names and attributes only (no calls, no subscripts)."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _sets_again(scope: cst.CSTNode, key: str, skip: cst.CSTNode, emptied: bool = False) -> bool:
    """``key = None`` somewhere in ``scope`` outside ``skip``; with ``emptied``, any ``key = ...``
    or ``key.clear()``/``key.pop()`` (the list can be empty again)."""
    stack = [scope]
    while stack:
        n = stack.pop()
        if n is skip or (n is not scope and isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda))):
            continue
        if isinstance(n, cst.Assign) and (emptied or _is_none(n.value)) and any(
                _plain_dotted(t.target) == key for t in n.targets):
            return True
        if emptied and isinstance(n, cst.Call) and _plain_dotted(n.func) in (f"{key}.clear", f"{key}.pop"):
            return True
        stack.extend(child_nodes(n))
    return False


_ANOMALY = frozenset({"isnan", "isinf", "isneginf", "isposinf"})


def anomaly_branch(node: cst.If) -> bool:
    """`if torch.isnan(loss): print(...); continue`: the branch a bad value takes, which gives up
    on the step (its body ends in `continue`, `break`, `return` or `raise`): it runs on the rare
    step that went wrong, not on a step's normal path. (`if torch.isinf(torch.tensor(norm_type)):`
    computing an infinity norm is a configuration's branch: it does not give up.)"""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    if not body or type(body[-1]) is not cst.SimpleStatementLine \
            or type(body[-1].body[-1]) not in (cst.Continue, cst.Break, cst.Return, cst.Raise):
        return False
    return anomaly_test(node.test)


def anomaly_test(test: cst.BaseExpression) -> bool:
    """`torch.isnan(loss)`, `not torch.isfinite(loss).all()`, and `or`/`and` of those."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return _calls(test.expression, frozenset({"isfinite"}))
    if type(test) is cst.BooleanOperation:
        left, right = anomaly_test(test.left), anomaly_test(test.right)
        return (left and right) if type(test.operator) is cst.Or else (left or right)
    return _calls(test, _ANOMALY)


def _calls(node: cst.BaseExpression, names: frozenset) -> bool:
    """`torch.isnan(x)`, `torch.isnan(x).any()`, `math.isnan(v)`, `x.isnan().any()`."""
    while type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in ("any", "all", "item"):
        node = node.func.value
    if type(node) is not cst.Call:
        return False
    func = node.func
    name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
    return name in names
