"""HPU010 context-manager-breaks-compile: ``sdp_kernel(...)`` as a context manager in code that
``torch.compile`` compiles.

Source: seed 002 (Gaudi docs, "Optimizations of PyTorch Models", *Using Fused Scaled Dot Product
Attention*): "Do not use the context manager mechanism to set the operation mode when running
workloads in torch.compile mode as this causes breaks in the compiled graphs ... Instead, use the
API parameter to set the FusedSDPA operation mode and avoid graph breaks."
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis import code, dotted
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
        self.uses: list = []  # (WithItem, enclosing function scope)
        self.compiled_names: set = set()
        self.compiles_module = False
        self.decorated: set = set()  # ids of FunctionDef nodes decorated with torch.compile

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for dec in node.decorators:
            d = dec.decorator
            target = d.func if isinstance(d, cst.Call) else d
            if self.an.qualname(target) == "torch.compile":
                self.decorated.add(id(node))

    def visit_Call(self, node: cst.Call) -> None:
        an = self.an
        func = node.func
        if an.qualname(func) == "torch.compile" and node.args:
            arg = node.args[0].value
            name = dotted(arg)
            if name and name in an.functions_by_name:
                self.compiled_names.add(name)
            else:
                self.compiles_module = True
        elif isinstance(func, cst.Attribute) and func.attr.value == "compile" and an.is_model_name(func.value):
            self.compiles_module = True

    def visit_WithItem(self, node: cst.WithItem) -> None:
        item = node.item
        if not isinstance(item, cst.Call):
            return
        qn = self.an.qualname(item.func) or ""
        if not (qn.endswith("sdp_kernel") and qn.startswith(("habana_frameworks", "torch.hpu"))):
            return
        fn = next((s for s in reversed(self.an.scopes) if s.kind == "function"), None)
        if fn is not None:
            self.uses.append((node, fn, code(item.func)))

    def finish(self) -> None:
        an = self.an
        roots = [fn for fn in an.all_functions
                 if id(fn.node) in self.decorated or fn.name in self.compiled_names
                 or (self.compiles_module and fn.is_forward)]
        compiled = {id(fn): fn for fn in an.closure(roots)}
        for item, fn, cm in self.uses:
            if id(fn) in compiled:
                why = f"in {fn.name}()"
                self.report(item, MESSAGE.format(cm=cm + "(...)", why=why))
