"""HPU013 branch-on-tensor-breaks-graph: Python ``if``/``while``/``... if ... else ...`` on a
tensor's value inside code that torch.compile compiles.

Sources: PyTorch docs, "torch.compile Troubleshooting" / "Working with Graph Breaks"
("Data-dependent branching") and "Control Flow - Cond" (``torch.cond``): Dynamo cannot trace a
jump chosen by a tensor's value; it breaks the graph and compiles a resume function per path.
Measured on torch 2.13 (docs/compile-target.md): ``if``, ``while`` and conditional expressions
on a tensor break the graph; ``assert`` on one tensor (``assert torch.isfinite(x).all()``,
``assert ~torch.isnan(loss)``) does not (it is traced as an assertion), but ``assert not t`` and
``assert a and b``/``or`` on tensors do (the test takes more than the one jump Dynamo turns into
an assertion: "Data-dependent branching"); a branch on a shape is a guard, not a break.
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import code
from hpulint.rules.base import Rule
from hpulint.rules.compiled_region import compiled_why, is_tensor, not_traced, where

MESSAGE = (
    "`{kind}` on a tensor's value {where}: Dynamo cannot trace a branch chosen by the data, so "
    "the graph breaks here on every call (graph break: the graph ends, Python reads the value, "
    "and a resume function compiles for each path taken). {fix}"
)
FIX = ("Keep the choice in the graph: `torch.where(cond, a, b)`, or "
       "`torch.cond(pred, true_fn, false_fn, operands)`")
ASSERT_FIX = ("Dynamo traces an `assert` on one tensor as an assertion in the graph, not this form: "
              "write {fix}")


class BranchOnTensorBreaksGraph(Rule):
    code = "HPU013"
    name = "branch-on-tensor-breaks-graph"
    summary = "if/while/conditional expression or assert not on a tensor inside a torch.compile'd function (graph break)"
    triggers = ("if ", "while ", "assert ")

    def visit_If(self, node: cst.If) -> None:
        self._check(node.test, "if")

    def visit_While(self, node: cst.While) -> None:
        self._check(node.test, "while")

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._check(node.test, "... if ... else ...")

    def visit_Assert(self, node: cst.Assert) -> None:
        """Dynamo turns the one jump to the AssertionError on a tensor into an assertion: `assert t`
        is traced. `assert not t` jumps the other way, and in `assert a and b` (`or`) every operand
        but the last jumps elsewhere: those jumps on a tensor break (measured on 2.13)."""
        test = node.test
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            self._check(test, "assert not", ASSERT_FIX.format(fix="`assert ~t` (or `assert t.logical_not()`)"))
        elif type(test) is cst.BooleanOperation:
            ops = _flat(test)
            last = ops[-1]
            jumps = ops[:-1] + ([last] if type(last) is cst.UnaryOperation
                                and type(last.operator) is cst.Not else [])
            self._check(test, f"assert ... {code(test.operator).strip()} ...",
                        ASSERT_FIX.format(fix="one tensor test (`assert (a & b).all()`) or one assert per test"),
                        parts=jumps)

    def _check(self, test: cst.BaseExpression, kind: str, fix: str = FIX, parts=None) -> None:
        an = self.an
        fn = an.function
        if fn.kind != "function" or not_traced(an):
            return
        parts = [an.value(p) for e in (parts if parts is not None else [test]) for p in _operands(e)]

        def when():
            reason = compiled_why(an, fn)
            if reason is None or not any(is_tensor(an, p) for p in parts):
                return None
            return where(fn, reason)

        self.report(test, MESSAGE.format(kind=kind, where="{why}", fix=fix), when=when)


def _operands(test: cst.BaseExpression):
    """The values whose truth the test takes, through `and`, `or` and `not`."""
    stack = [test]
    while stack:
        n = stack.pop()
        if type(n) is cst.BooleanOperation:
            stack += (n.left, n.right)
        elif type(n) is cst.UnaryOperation and type(n.operator) is cst.Not:
            stack.append(n.expression)
        else:
            yield n


def _flat(test: cst.BooleanOperation) -> list:
    """The operands of `a and b and c` in order (one operator or mixed)."""
    out = []
    for side in (test.left, test.right):
        out += _flat(side) if type(side) is cst.BooleanOperation else [side]
    return out
