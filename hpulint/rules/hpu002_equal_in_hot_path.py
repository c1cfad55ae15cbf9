"""HPU002 equal-in-hot-path: ``torch.equal`` where it runs every step.

Source: seed 003 (PyTorch/XLA performance debugging, part II): ``torch.equal`` inside the
multi-head attention module caused frequent recompilation and slowed training about 7x; PyTorch
1.9 replaced it with an identity check (``query is key``). ``torch.equal`` returns a Python bool,
so the device must run the pending graph and copy the answer to the host.
"""
from __future__ import annotations

import libcst as cst

from hpulint.rules.base import Rule

MESSAGE = (
    "`{call}` returns a Python bool {why}: every call makes the device run the pending graph "
    "and copy the result to the host, and cuts the graph there. Compare identity (`a is b`) or "
    "decide once outside the step"
)


class EqualInHotPath(Rule):
    code = "HPU002"
    name = "equal-in-hot-path"
    summary = "torch.equal in a step loop, a forward() or a function called every step"
    triggers = ("equal",)


    def visit_Call(self, node: cst.Call) -> None:
        an = self.an
        func = node.func
        if an.qualname(func) == "torch.equal":
            call = "torch.equal(...)"
        elif isinstance(func, cst.Attribute) and func.attr.value == "equal" and len(node.args) == 1 \
                and not isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString)) \
                and an.qualname(func.value) != "torch":
            call = ".equal(...)"
        else:
            return
        self.report(node, MESSAGE.format(call=call, why="{why}"), when=an.hot_context())
