"""HPU008 data-dependent-control-flow: Python ``if``/``while``/``assert`` on a tensor's value.

Source: Gaudi docs, "HPU Graphs for Training", *Dynamic Control Flow*: a branch chosen
by the data means one graph per path; the seed splits the model into separate graphs around the
branch. Deciding the branch also needs the value on the host: the device must run the pending
graph and copy the tensor back (a host sync), every step.
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.guards import device_predicate
from hpulint.analysis.syntax import STRINGS
from hpulint.rules.base import Rule

MESSAGE = (
    "`{kind}` on a tensor's value {why}: Python must read the tensor on the host (the device "
    "finishes the pending graph first) and each path is its own graph. Keep the choice on the "
    "device (`torch.where(cond, a, b)`), or decide once outside the step"
)


class DataDependentControlFlow(Rule):
    code = "HPU008"
    name = "data-dependent-control-flow"
    summary = "if/while/assert on a tensor value in forward() or a step loop"
    triggers = ("if ", "while ", "assert ", "not ")
    lazy_mode_only = True

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.ragged: dict = {}  # (function, name) bound to a result whose size follows the data -> its input
        self.tested: set = set()  # `not` operations inside a test checked already

    def visit_Assign(self, node: cst.Assign) -> None:
        """`idx = torch.nonzero(m)`, `rejected = (p > q).nonzero()`: its length is data."""
        if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:
            return
        key = (id(self.an.function), node.targets[0].target.value)
        value = node.value
        if type(value) is cst.Subscript and len(value.slice) == 1 and type(value.slice[0].slice) is cst.Index \
                and type(value.value) is cst.Call:
            # `torch.where(ids == eos)[0]`, `m.nonzero(as_tuple=True)[1]`: one of the index tensors
            value = value.value
        source = None
        if type(value) is cst.Call and (self.an.qualname(value.func) or "") == "torch.where" and len(value.args) == 1:
            source = value.args[0].value  # (one-argument where: the indices where it holds)
        elif type(value) is cst.Call and (self.an.qualname(value.func) or "") in RAGGED_FUNCTIONS and value.args:
            source = value.args[0].value
        elif type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in RAGGED_METHODS:
            source = value.func.value
        if source is not None:
            self.ragged[key] = self.an.value(source)  # what it was computed from (on the device?)
        else:
            self.ragged.pop(key, None)

    def visit_If(self, node: cst.If) -> None:
        self._check(node.test, "if")

    def visit_While(self, node: cst.While) -> None:
        self._check(node.test, "while")

    def visit_Assert(self, node: cst.Assert) -> None:
        self._check(node.test, "assert")

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._check(node.test, "... if ... else ...")

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        """`left_padding = not torch.sum(ids[:, -1] == pad)`: `not` takes the tensor's truth in
        Python wherever it is written, not only in a test."""
        if type(node.operator) is cst.Not and node not in self.tested:
            self._check(node, "not")

    def _check(self, test: cst.BaseExpression, kind: str) -> None:
        an = self.an
        self.tested.update(n for n in _nots(test))
        parts, scans = [], []
        for p, devices in _operands(test, an):
            if type(p) is cst.Comparison and type(p.comparisons[0].operator) in (cst.In, cst.NotIn):
                scans.append((p.left, an.value(p.left), an.value(p.comparisons[0].comparator), devices))
            else:
                parts.append((an.value(p), devices))
        if not parts and not scans:
            return
        here = an.here()
        sized = self._ragged_size(test)
        if sized:
            # `if len(top_k_idx) > 0:` after `top_k_idx = torch.nonzero(m)`: the size is data, so
            # Python must wait for the device to know it
            source = self.ragged[(id(an.function), sized)]
            self.report(test, SIZE_MESSAGE.format(kind=kind, name=sized, why="{why}"),
                        when=lambda: an.every_step(here) if an.is_device_tensor(source) else None)
            # (the test's other operands are still checked: one finding per test, the first that holds)

        def when():
            # (an operand after `not is_hpu_tensor(x) and ...` is never evaluated on hpu)
            if not any(an.is_device_tensor(p) and an.evaluated_on(here, d) for p, d in parts) and not any(
                    an.is_device_tensor(c) and _numeric(left, lv, an) and an.evaluated_on(here, d)
                    for left, lv, c, d in scans):
                return None
            return an.every_step(here)  # not on logging steps only, nor off the target device

        self.report(test, MESSAGE.format(kind=kind, why="{why}"), when=when)

    def _ragged_size(self, test: cst.BaseExpression):
        """The name whose data-dependent size the test reads (`len(x)`, `x.shape[0]`, `x.size(0)`,
        `x.numel()`), or None."""
        fn = id(self.an.function)
        stack = [test]
        while stack:
            n = stack.pop()
            target = None
            if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value == "len" and len(n.args) == 1:
                target = n.args[0].value
            elif type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in ("size", "numel"):
                target = n.func.value
            elif type(n) is cst.Attribute and n.attr.value == "shape":
                target = n.value
            if type(target) is cst.Name and (fn, target.value) in self.ragged:
                return target.value
            if type(n) in (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation, cst.Subscript,
                           cst.BinaryOperation):
                stack += [c for c in (getattr(n, "left", None), getattr(n, "right", None),
                                      getattr(n, "expression", None), getattr(n, "value", None)) if c is not None]
                if type(n) is cst.Comparison:
                    stack += [c.comparator for c in n.comparisons]
        return None


def _nots(test: cst.BaseExpression):
    """The `not` operations of a test, through `and`/`or`/`not`."""
    stack = [test]
    while stack:
        n = stack.pop()
        if type(n) is cst.UnaryOperation and type(n.operator) is cst.Not:
            yield n
            stack.append(n.expression)
        elif type(n) is cst.BooleanOperation:
            stack += (n.left, n.right)


RAGGED_FUNCTIONS = frozenset({"torch.nonzero", "torch.argwhere", "torch.masked_select", "torch.unique"})
RAGGED_METHODS = frozenset({"nonzero", "argwhere", "masked_select", "unique"})
SIZE_MESSAGE = (
    "`{kind}` on the size of `{name}`, whose length follows the data (a `nonzero`-like result), "
    "{why}: Python must wait for the device to know it, and each size is its own graph. Keep the "
    "size static (`torch.where`, a padded `topk`) or decide on the device"
)


def _operands(test: cst.BaseExpression, an):
    """The values whose truth the test takes, through `and`, `or` and `not`; the operands after
    a logging-interval test in an `and` (`step % k == 0 and torch.isnan(loss)`) are read on
    those steps only, so they are left out. Each comes with the device tests the operands before
    it must pass for it to be evaluated at all (`not is_hpu_tensor(m) and m.any()`)."""
    stack = [(test, ())]
    while stack:
        n, devices = stack.pop()
        if type(n) is cst.BooleanOperation:
            if type(n.operator) is cst.And and an.is_interval(n.left):
                continue
            first = device_predicate(n.left, an.function.device_flags)
            if first is not None and type(n.operator) is cst.Or:
                first = (first[0], not first[1])  # the right side runs when the left is false
            stack += ((n.left, devices), (n.right, devices + ((first,) if first else ())))
        elif type(n) is cst.UnaryOperation and type(n.operator) is cst.Not:
            stack.append((n.expression, devices))
        elif type(n) is cst.Call and n.args and an.qualname(n.func) == "torch.is_nonzero":
            yield n.args[0].value, devices  # a Python bool read from the tensor's value
        elif type(n) is cst.Call and len(n.args) == 1 and not n.args[0].star and type(n.func) is cst.Name \
                and n.func.value in ("all", "any", "bool") and an.qualname(n.func) in (None, n.func.value):
            # `if all(eos_reached):` iterates the tensor in Python: every element read on the host
            yield n.args[0].value, devices
        elif type(n) is cst.Comparison and len(n.comparisons) == 1 \
                and type(n.comparisons[0].operator) in (cst.In, cst.NotIn):
            # `0.0 in mask`, `self.pad_token_id in labels`: Python scans the tensor's values; a
            # key (`name in outputs`, `"k" in batch`) is looked up in a dict or a model output
            yield n, devices  # (decided once the project is linked: see _check)
        elif type(n) is cst.Comparison and (type(n.left) in STRINGS or any(type(c.comparator) in STRINGS
                                                                         for c in n.comparisons)):
            # `if attention_mask != "full":`: a tensor is never equal to a string (Python falls back
            # to identity), so nothing is read. (The comparison's value keeps its parts: a compiled
            # region guards on a string tag compared there, HPU017.)
            continue
        else:
            yield n, devices


def _numeric(node: cst.BaseExpression, value, an) -> bool:
    """A number looked for in a tensor: a literal, a value known to be a number or a tensor, or
    a name that reads as a token id (`pad_token_id`)."""
    if type(node) is cst.UnaryOperation:
        node = node.expression
    if type(node) in (cst.Integer, cst.Float):
        return True
    if an.kind(value) in ("scalar", "data", "tensor", "mask"):
        return True
    leaf = node.attr.value if type(node) is cst.Attribute else node.value if type(node) is cst.Name else ""
    return leaf.endswith(("_id", "_idx")) or leaf in ("id", "idx")
