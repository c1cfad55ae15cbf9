"""HPU010 context-manager-breaks-compile: ``sdp_kernel(...)`` as a context manager in code that
``torch.compile`` compiles.

Source: Gaudi docs, "Optimizations of PyTorch Models", *Using Fused Scaled Dot Product
Attention*: "Do not use the context manager mechanism to set the operation mode when running
workloads in torch.compile mode as this causes breaks in the compiled graphs ... Instead, use the
API parameter to set the FusedSDPA operation mode and avoid graph breaks."
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import code
from hpulint.rules.base import Rule

MESSAGE = (
    "`{cm}` as a context manager in code compiled with torch.compile ({why}): the context manager "
    "breaks the compiled graph in two (Gaudi docs, \"Optimizations of PyTorch Models\", "
    "https://docs.habana.ai/en/latest/PyTorch/Model_Optimization_PyTorch/Optimization_in_PyTorch_Models.html). Set the mode with FusedSDPA.apply's "
    "`recompute_mode` argument instead"
)


class ContextManagerBreaksCompile(Rule):
    code = "HPU010"
    name = "context-manager-breaks-compile"
    summary = "sdp_kernel(...) used as a context manager inside torch.compile'd code"
    triggers = ("sdp_kernel",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.uses: list = []  # (WithItem, enclosing function scope, spelled name)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        item = node.item
        if type(item) is not cst.Call:
            return
        qn = self.an.qualname(item.func) or ""
        if not (qn.endswith("sdp_kernel") and qn.startswith(("habana_frameworks", "torch.hpu"))):
            return
        fn = self.an.function
        if fn.kind == "function":
            self.uses.append((node, fn, code(item.func)))

    def finish(self) -> None:
        for item, fn, cm in self.uses:
            reason = getattr(fn, "compiled_reason", None)
            if reason:
                why = f"in {fn.name}(), {reason}"
                self.report(item, MESSAGE.format(cm=cm + "(...)", why=why))
