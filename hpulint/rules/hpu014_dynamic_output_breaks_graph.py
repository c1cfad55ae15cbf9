"""HPU014 dynamic-output-breaks-graph: an op whose output shape depends on the data
(``nonzero``, boolean-mask indexing, ``unique``, one-argument ``where``...) or ``torch.equal``
inside code that torch.compile compiles.

Sources: PyTorch docs, "Dynamic Shapes" (data-dependent output sizes need
``capture_dynamic_output_shape_ops``; otherwise Dynamo breaks the graph at the op) and
"torch.compile Troubleshooting". Measured on torch 2.13 (docs/compile-target.md): ``nonzero``,
``x[mask]``, ``masked_select``, one-argument ``where``, ``unique``, ``bincount`` (with or without
``minlength``), ``F.one_hot`` without ``num_classes`` and ``repeat_interleave`` with tensor repeats break the graph (and the graph after them recompiles once when the size first
changes); ``torch.equal`` breaks it too, whether or not an ``if`` reads the result. The NumPy ones
too: Dynamo runs NumPy code on tensors through ``torch._numpy``, so ``np.unique`` (also with
``return_counts=True``), ``np.nonzero``, ``np.argwhere``, ``np.flatnonzero``, ``np.bincount`` and a
one-argument ``np.where`` break the graph there, whether given ``labels.numpy()``, a tensor or a
constant array (``np.sort`` is traced).
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.build import mask_value
from hpulint.rules.base import Rule
from hpulint.rules.compile_data_reads import CTC_WHY, FIX_CTC, FIX_SIZE, SIZE_WHY, is_ctc, size_from_data
from hpulint.rules.compiled_region import (captures_dynamic_shapes, captures_scalars, compiled_why, is_tensor,
                                           maybe_tensor, not_traced, where)

MESSAGE = (
    "{what} {where}: {reason}, so the graph breaks here on every call (graph break: the graph "
    "ends, the op runs eagerly, the rest compiles as another graph). {fix}"
)
SHAPE = "its output shape depends on the data and Dynamo does not capture it"
SHAPE_FIX = ("Keep the shape static (`torch.where(mask, x, 0)`, or weight by the mask), or set "
             "`torch._dynamo.config.capture_dynamic_output_shape_ops = True`")
EQUAL = "`torch.equal` returns a Python bool read from both tensors' values"
ONE_HOT = ("without `num_classes` its number of classes is the largest label + 1, read from the data "
           "(\"Attempted to use `torch.nn.functional.one_hot` with data-dependent output shape\")")
ONE_HOT_FIX = ("Pass the number of classes: `F.one_hot(labels, num_classes)` (its output shape is then static; "
               "`capture_dynamic_output_shape_ops` does not help here)")
EQUAL_FIX = ("Compare on the device (`(a == b).all()` with `torch.where`), or move the check out of "
             "the compiled function")
DYNAMIC = {
    "nonzero": "torch.nonzero",
    "argwhere": "torch.argwhere",
    "masked_select": "torch.masked_select",
    "unique": "torch.unique",
    "unique_consecutive": "torch.unique_consecutive",
    "bincount": "torch.bincount",  # its length is max(minlength, largest value + 1)
}
DYNAMIC_LEAF = {full: leaf for leaf, full in DYNAMIC.items()}  # (every one is torch.*: no method call of them)
NUMPY = frozenset({"numpy.unique", "numpy.nonzero", "numpy.argwhere", "numpy.flatnonzero", "numpy.bincount",
                   "numpy.unique_counts", "numpy.unique_values", "numpy.unique_inverse", "numpy.unique_all"})
NUMPY_FIX = ("Do it with tensor ops of a fixed shape (class counts: `torch.bincount(labels, minlength=C)` is "
             "also a break, `F.one_hot(labels, C).sum(0)` is not), or run it in the eager code and pass the result in")


class DynamicOutputBreaksGraph(Rule):
    code = "HPU014"
    name = "dynamic-output-breaks-graph"
    summary = ("nonzero / mask indexing / unique / bincount / one_hot without num_classes / torch.equal / a tensor "
               "factory sized from a tensor's value / F.ctc_loss / np.unique, np.nonzero... inside a torch.compile'd "
               "function (graph break)")
    triggers = ("[", "nonzero", "where", "masked_select", "unique", "repeat_interleave", "argwhere", "equal", "bincount",
                "one_hot", "ctc_loss", "arange", "zeros", "ones", "empty", "full", "rand")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.capture = captures_dynamic_shapes(ctx.source)
        self.scalars = captures_scalars(ctx.source)
        self.stores: set = set()
        self.covered: set = set()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.stores.add(id(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.stores.add(id(node.target))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        an = self.an
        if self.capture or an.function.kind != "function" or id(node) in self.stores:
            return  # x[mask] = v is traced as an index_put: no break
        base = an.value(node.value)
        for el in node.slice:
            s = el.slice
            if type(s) is not cst.Index:
                continue
            idx = s.value
            if _is_where1(an, idx):
                self.covered.add(id(idx))
                self._report(node, "boolean-mask indexing", SHAPE, SHAPE_FIX, lambda: is_tensor(an, base))
                return
            v = an.value(idx)
            structural = mask_value(v) or (_mask_name(idx) and _opaque(v))
            if structural or type(idx) in (cst.Name, cst.Attribute, cst.Subscript, cst.Call):
                self._report(node, "boolean-mask indexing", SHAPE, SHAPE_FIX,
                             lambda v=v, structural=structural: is_tensor(an, base) and _is_mask(an, v, structural))
                return

    def visit_Call(self, node: cst.Call) -> None:
        an = self.an
        if an.function.kind != "function":
            return
        func = node.func
        qn = an.qualname(func) or ""
        method = func.attr.value if type(func) is cst.Attribute else None
        first = an.value(node.args[0].value) if node.args else None
        if qn == "torch.equal":
            self._report(node, "`torch.equal(...)`", EQUAL, EQUAL_FIX, lambda: True)
            return
        if is_ctc(an, node):
            self._report(node, f"`{qn.rsplit('.', 1)[1]}(...)`", CTC_WHY, FIX_CTC, lambda: True)
            return
        sizes = None if self.scalars else size_from_data(an, node)
        if sizes:
            vals = [an.value(s) for s in sizes]
            self._report(node, f"`{qn}(...)`", SIZE_WHY, FIX_SIZE, lambda: any(is_tensor(an, v) for v in vals))
            return
        if qn == "torch.nn.functional.one_hot" and node.args and _no_class_count(node):
            self._report(node, "`one_hot` without `num_classes`", ONE_HOT, ONE_HOT_FIX, lambda: is_tensor(an, first))
            return
        if self.capture:
            return
        if qn in NUMPY or (qn == "numpy.where" and len(node.args) == 1 and node.args[0].keyword is None):
            self._report(node, f"`np.{qn.split('.', 1)[1]}(...)`", SHAPE, NUMPY_FIX, lambda: True)
            return
        if _is_where1(an, node):
            if id(node) not in self.covered:
                self._report(node, "one-argument `torch.where`", SHAPE, SHAPE_FIX, lambda: is_tensor(an, first))
            return
        leaf = DYNAMIC_LEAF.get(qn)
        if leaf is not None:  # its first argument must be a tensor: a parameter not known to be anything else is one
            self._report(node, f"`{leaf}`", SHAPE, SHAPE_FIX, lambda: maybe_tensor(an, first))
            return
        if method in DYNAMIC and not qn.startswith(("torch.", "numpy.")):
            recv = an.value(func.value)
            self._report(node, f"`.{method}()`", SHAPE, SHAPE_FIX, lambda recv=recv: is_tensor(an, recv))
            return
        if qn == "torch.repeat_interleave" or (method == "repeat_interleave" and not qn.startswith("torch.")):
            repeats = node.args[1:2] if qn == "torch.repeat_interleave" else node.args[:1]
            if not repeats or any(a.keyword is not None and a.keyword.value == "output_size" for a in node.args):
                return
            rep = an.value(repeats[0].value)
            self._report(node, "`repeat_interleave` with tensor repeats", SHAPE,
                         "Pass `output_size=` so the output shape is known, or " + SHAPE_FIX[0].lower() + SHAPE_FIX[1:],
                         lambda: is_tensor(an, rep))

    def _report(self, node: cst.CSTNode, what: str, reason: str, fix: str, check) -> None:
        an = self.an
        fn = an.function
        if not_traced(an):
            return

        def when():
            why = compiled_why(an, fn)
            if why is None or not check():
                return None
            return where(fn, why)

        self.report(node, MESSAGE.format(what=what, where="{why}", reason=reason, fix=fix), when=when)


def _no_class_count(call: cst.Call) -> bool:
    """`F.one_hot(t)` or `F.one_hot(t, -1)`: the class count is read from the data (measured on
    2.13: a graph break, also with `capture_dynamic_output_shape_ops = True`)."""
    given = [a.value for a in call.args[1:2] if a.keyword is None] + \
        [a.value for a in call.args if a.keyword is not None and a.keyword.value == "num_classes"]
    if not given:
        return True
    v = given[0]
    return type(v) is cst.UnaryOperation and type(v.operator) is cst.Minus and type(v.expression) is cst.Integer \
        and v.expression.value == "1"


def _is_where1(an, node: cst.BaseExpression) -> bool:
    return type(node) is cst.Call and an.qualname(node.func) == "torch.where" and len(node.args) == 1 \
        and node.args[0].keyword is None


_MASK_WORDS = ("mask", "valid", "keep", "active", "select", "flag", "is_", "has_")


def _mask_name(node: cst.BaseExpression) -> bool:
    """An index named like a boolean mask (`valid`, `keep_mask`, `self.is_pad`)."""
    name = node.value if type(node) is cst.Name else node.attr.value if type(node) is cst.Attribute else ""
    return any(w in name.lower() for w in _MASK_WORDS)


def _is_mask(an, v, structural: bool) -> bool:
    """A boolean tensor: known to be a device mask, or a tensor (also on the CPU, which Dynamo
    traces the same) built by a comparison or named like a mask."""
    kind = an.kind(v)
    return kind == "mask" or (structural and kind in ("host", "tensor", "unknown"))


def _opaque(v) -> bool:
    """A value whose making this file does not show (a parameter, an attribute): only its name
    can say it is a mask."""
    from hpulint.analysis.values import V_UNKNOWN, Attr, Param

    return isinstance(v, (Param, Attr)) or v == V_UNKNOWN
