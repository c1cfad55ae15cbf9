"""HPU002 equal-in-hot-path: ``torch.equal`` (or ``torch.allclose``) where it runs every step.

Source: PyTorch/XLA performance debugging, part II: ``torch.equal`` inside the
multi-head attention module caused frequent recompilation and slowed training about 7x; PyTorch
1.9 replaced it with an identity check (``query is key``). ``torch.equal`` returns a Python bool,
so the device must run the pending graph and copy the answer to the host.
"""
from __future__ import annotations

import libcst as cst

from hpulint.model import UNSAFE, Fix
from hpulint.rules.base import Rule

MESSAGE = (
    "`{call}` returns a Python bool {why}: every call makes the device run the pending graph "
    "and copy the result to the host, and cuts the graph there. {advice}"
)
EQUAL_ADVICE = "Compare identity (`a is b`) or decide once outside the step"
ALLCLOSE_ADVICE = ("Keep the test on the device (`torch.isclose(a, b).all()` as a tensor, used with "
                   "`torch.where`) or decide once outside the step")


class EqualInHotPath(Rule):
    code = "HPU002"
    name = "equal-in-hot-path"
    summary = "torch.equal or torch.allclose in a step loop, a forward() or a function called every step"
    triggers = ("equal", "allclose")
    lazy_mode_only = True
    fix_safety = "unsafe"


    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.bool_context: set = set()  # ids of expressions used only as a truth value

    def visit_If(self, node: cst.If) -> None:
        self.bool_context.add(id(node.test))

    def visit_While(self, node: cst.While) -> None:
        self.bool_context.add(id(node.test))

    def visit_Assert(self, node: cst.Assert) -> None:
        self.bool_context.add(id(node.test))

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        if id(node) in self.bool_context:
            self.bool_context.update((id(node.left), id(node.right)))

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if type(node.operator) is cst.Not:
            self.bool_context.add(id(node.expression))

    def visit_Call(self, node: cst.Call) -> None:
        an = self.an
        func = node.func
        qn = an.qualname(func)
        positional = [a for a in node.args if a.keyword is None]
        if qn in ("torch.equal", "torch.allclose") and len(positional) == 2:
            call, a, b = f"{qn}(...)", positional[0], positional[1]
        elif type(func) is cst.Attribute and func.attr.value in ("equal", "allclose") and len(positional) == 1 \
                and type(func.value) not in (cst.SimpleString, cst.ConcatenatedString) \
                and an.qualname(func.value) not in ("torch", "numpy", "math"):
            call, a, b = f".{func.attr.value}(...)", cst.Arg(func.value), positional[0]
        else:
            return
        fix = self._identity_fix(node, a, b) if call.endswith("equal(...)") else None
        here = an.here()
        va, vb = an.value(a.value), an.value(b.value)

        def when():
            if an.is_host(va) or an.is_host(vb):
                return None  # two host tensors: no device work to wait for
            return an.every_step(here)

        advice = EQUAL_ADVICE if call.endswith("equal(...)") else ALLCLOSE_ADVICE
        self.report(node, MESSAGE.format(call=call, why="{why}", advice=advice), fix=fix, when=when)

    def _identity_fix(self, node: cst.Call, a: cst.Arg, b: cst.Arg):
        """`a is b` when both are parameters of the enclosing function (the PyTorch/XLA debugging guide's MHA case).

        Unsafe: equal tensors that are different objects now compare False; that is the
        point when the caller passes the same tensor for both (self-attention), and the reason
        a user must review it.
        """
        fn = self.an.function
        if fn.kind != "function" or type(fn.node) is not cst.FunctionDef:
            return None
        params = {p.name.value for p in (*fn.node.params.posonly_params, *fn.node.params.params,
                                           *fn.node.params.kwonly_params)}
        if a.keyword or b.keyword or a.star or b.star:
            return None
        if not (type(a.value) is cst.Name and type(b.value) is cst.Name
                and a.value.value in params and b.value.value in params):
            return None
        expr = cst.Comparison(left=a.value, comparisons=[cst.ComparisonTarget(cst.Is(), b.value)])
        if id(node) not in self.bool_context:
            expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        expr = expr.with_changes(lpar=[*node.lpar, *expr.lpar], rpar=[*expr.rpar, *node.rpar])
        return Fix(UNSAFE, f"compare identity: `{a.value.value} is {b.value.value}`", {node: expr})
