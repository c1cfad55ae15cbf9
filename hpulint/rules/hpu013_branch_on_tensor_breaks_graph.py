"""HPU013 branch-on-tensor-breaks-graph: Python ``if``/``while``/``... if ... else ...`` on a
tensor's value inside code that torch.compile compiles.

Sources: PyTorch docs, "torch.compile Troubleshooting" / "Working with Graph Breaks"
("Data-dependent branching") and "Control Flow - Cond" (``torch.cond``): Dynamo cannot trace a
jump chosen by a tensor's value; it breaks the graph and compiles a resume function per path.
Measured on torch 2.13 (docs/compile-target.md): ``if``, ``while`` and conditional expressions
on a tensor break the graph; ``assert`` on a tensor does not (it is traced as an assertion), and
a branch on a shape is a guard, not a break.
"""
from __future__ import annotations

import libcst as cst

from hpulint.rules.base import Rule
from hpulint.rules.compiled_region import compiled_why, is_tensor, where

MESSAGE = (
    "`{kind}` on a tensor's value {where}: Dynamo cannot trace a branch chosen by the data, so "
    "the graph breaks here on every call (graph break: the graph ends, Python reads the value, "
    "and a resume function compiles for each path taken). Keep the choice in the graph: "
    "`torch.where(cond, a, b)`, or `torch.cond(pred, true_fn, false_fn, operands)`"
)


class BranchOnTensorBreaksGraph(Rule):
    code = "HPU013"
    name = "branch-on-tensor-breaks-graph"
    summary = "if/while/conditional expression on a tensor inside a torch.compile'd function (graph break)"
    triggers = ("if ", "while ")

    def visit_If(self, node: cst.If) -> None:
        self._check(node.test, "if")

    def visit_While(self, node: cst.While) -> None:
        self._check(node.test, "while")

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._check(node.test, "... if ... else ...")

    def _check(self, test: cst.BaseExpression, kind: str) -> None:
        an = self.an
        fn = an.function
        if fn.kind != "function":
            return
        parts = [an.value(p) for p in _operands(test)]

        def when():
            reason = compiled_why(an, fn)
            if reason is None or not any(is_tensor(an, p) for p in parts):
                return None
            return where(fn, reason)

        self.report(test, MESSAGE.format(kind=kind, where="{why}"), when=when)


def _operands(test: cst.BaseExpression):
    """The values whose truth the test takes, through `and`, `or` and `not`."""
    stack = [test]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.BooleanOperation):
            stack += (n.left, n.right)
        elif isinstance(n, cst.UnaryOperation) and isinstance(n.operator, cst.Not):
            stack.append(n.expression)
        else:
            yield n
