"""HPU011 loop-scalar-constant: a loop counter as a Python scalar operand of tensor arithmetic.

Evidence: Gaudi's "Avoiding Constant Variables in Loops" shows a loop value used as an
*index* becoming a constant (HPU001); no Gaudi source says a scalar *operand* does. On real
PyTorch/XLA 2.9 (tests/data/calibration/scripts/scalar_loop_counter.py) ``x * i`` compiles one
graph for 0, one for 1 and one for every other value: no recompilation every pass. So the rule is
off by default for every target (``hpulint.config.OFF_BY_DEFAULT``); select HPU011 by its code
to check for the worst case (``hpulint verify --scalars constant`` replays it).
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.int_arith import is_number_arith
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
    summary = ("a loop counter as a Python scalar operand of tensor arithmetic (off by default: "
               "select it by code)")
    triggers = ("for ", "while ")
    lazy_mode_only = True

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
            if not is_number_arith(scalar_side) or type(scalar_side) in (cst.Integer, cst.Float):
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
