"""HPU001 loop-iterator-constant: a loop counter baked into the graph as a constant.

Source: seed 002 (Gaudi docs, "Avoiding Constant Variables in Loops"): ``steps[i]`` creates a
different constant operator in the graph each pass, so each pass compiles a new graph; the
Gaudi V-Diffusion model reads ``steps[0]`` and rolls the buffer instead.
"""
from __future__ import annotations

import libcst as cst

from hpulint.rules.base import Rule

# torch factories whose positional arguments are sizes
FACTORIES = frozenset(
    f"torch.{n}" for n in ("zeros", "ones", "empty", "full", "rand", "randn", "randint",
                           "arange", "eye", "randperm", "tril_indices", "triu_indices")
)
# tensor methods / torch functions whose integer arguments shape the graph
SHAPING = frozenset(
    {"view", "reshape", "expand", "repeat", "narrow", "select", "roll", "unfold", "transpose",
     "movedim", "new_zeros", "new_ones", "new_empty", "new_full", "unsqueeze", "squeeze",
     "flatten", "split", "chunk", "tensor_split", "tile", "diagonal", "pad"}
)
SHAPING_KEYWORDS = frozenset({"dim", "dims", "shifts", "size", "start", "length", "index", "sizes",
                              "shape", "pad", "start_dim", "end_dim", "chunks", "split_size_or_sections"})

MESSAGE = (
    "loop counter `{name}` becomes a constant in the graph ({where}): every pass records a "
    "different graph, so the device compiles again on every iteration ({why}). Keep the value "
    "on the device: read a fixed position and `torch.roll` the buffer each pass, or index with "
    "a device tensor"
)


class LoopIteratorConstant(Rule):
    code = "HPU001"
    name = "loop-iterator-constant"
    summary = "a loop counter used as a tensor index, slice bound, size or dim in a step loop"
    triggers = ("for ", "while ")


    def visit_Subscript(self, node: cst.Subscript) -> None:
        an = self.an
        if an.loop is None or not an.is_tensor(node.value):
            return
        for el in node.slice:
            s = el.slice
            if isinstance(s, cst.Index):
                parts = [] if an.is_tensor(s.value) else [s.value]
            else:
                parts = [p for p in (s.lower, s.upper, s.step) if p is not None]
            for part in parts:
                name = an.counter_in(part)
                if name is not None:
                    where = "a slice bound" if isinstance(s, cst.Slice) else "a tensor index"
                    self._report(node, name, where)
                    return

    def visit_Call(self, node: cst.Call) -> None:
        an = self.an
        if an.loop is None:
            return
        func = node.func
        qn = an.qualname(func) or ""
        if qn in FACTORIES:
            where, args = "a size", [a for a in node.args if a.keyword is None or a.keyword.value == "size"]
        elif isinstance(func, cst.Attribute) and func.attr.value in SHAPING and an.is_tensor(func.value):
            where, args = f"an argument of .{func.attr.value}()", list(node.args)
        elif qn.startswith("torch.") and qn.rsplit(".", 1)[-1] in SHAPING | {"cat", "stack"}:
            where, args = f"an argument of {qn}()", list(node.args[1:])
        elif qn.startswith("torch.") or (isinstance(func, cst.Attribute) and an.is_tensor(func.value)):
            where = "a dim"
            args = [a for a in node.args if a.keyword is not None and a.keyword.value in SHAPING_KEYWORDS]
        else:
            return
        for arg in args:
            if an.is_tensor(arg.value):
                continue
            name = an.counter_in(arg.value)
            if name is not None:
                self._report(node, name, where)
                return

    def _report(self, node: cst.CSTNode, name: str, where: str) -> None:
        loop = self.an.counter_loop(name)
        if loop is None:
            return

        def when():
            return f"the loop {loop.step_reason}" if loop.is_step_loop else None

        self.report(node, MESSAGE.format(name=name, where=where, why="{why}"), when=when)
