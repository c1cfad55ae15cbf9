"""HPU011 loop-scalar-constant: a loop counter as a Python scalar operand of tensor arithmetic.

Source: seed 002 ("Avoiding Constant Variables in Loops"): Gaudi's lazy mode records a Python
scalar operand as a constant operator, so ``x * i`` is a new graph for every ``i``. PyTorch/XLA
passes such scalars as graph data (except the values 0 and 1), so this rule is on by default only
for the ``hpu`` target; select HPU011 explicitly to check other targets.
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.loops import is_number_arith
from hpulint.rules.base import Rule

MESSAGE = (
    "loop counter `{name}` is a Python scalar operand of tensor arithmetic: Gaudi lazy mode "
    "records it as a constant (PyTorch/XLA too when it is 0 or 1), so every pass can compile a "
    "new graph ({why}). Make it a device "
    "tensor once (`torch.tensor(float({name}), device=...)`) or keep a device counter"
)


class LoopScalarConstant(Rule):
    code = "HPU011"
    name = "loop-scalar-constant"
    summary = "a loop counter as a Python scalar operand of tensor arithmetic (hpu target)"
    triggers = ("for ", "while ")
    lazy_mode_only = True
    default_target = "hpu"

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._check(node, node.left, node.right)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node, node.target, node.value)

    def _check(self, node: cst.CSTNode, left: cst.BaseExpression, right: cst.BaseExpression) -> None:
        """A counter (or int arithmetic on one) as an operand next to a tensor: never a call
        argument or a tuple element, which the operand test already excludes."""
        an = self.an
        if an.loop is None and not an.function.pcounters:
            return
        for tensor_side, scalar_side in ((left, right), (right, left)):
            if not is_number_arith(scalar_side) or isinstance(scalar_side, (cst.Integer, cst.Float)):
                continue
            hit = an.counter_in(scalar_side)
            if hit is None:
                continue
            name, origin = hit
            tv, sv = an.value(tensor_side), an.value(scalar_side)
            here = an.here()

            def when(origin=origin, tv=tv, sv=sv, here=here):
                if not an.is_device_tensor(tv) or an.is_tensor(sv):
                    return None
                why = an.counter_why(here, origin)
                return None if why is None or an.device_excluded(here) else why

            self.report(node, MESSAGE.format(name=name, why="{why}"), when=when)
            return
