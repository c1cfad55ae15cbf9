"""Tensor subclasses of the file in a compiled region, for HPU012.

Measured on torch 2.13 (CPU, ``eager`` backend; the counts are in tests/test_compile_kinds21.py):

- a wrapper subclass with ``__torch_dispatch__`` (``_make_wrapper_subclass``, an int8 weight that
  dequantizes itself) and no ``__tensor_flatten__``/``__tensor_unflatten__``: the first operator of
  the compiled function that takes an instance (``F.linear(x, self.weight)``, ``h @ self.w``) is a
  graph break, whether the instance is a module attribute or an argument. With the two methods
  defined (a traceable wrapper subclass) Dynamo traces through it: one graph, no break;
- a plain ``torch.Tensor`` subclass (no ``__torch_function__`` or ``__torch_dispatch__`` of its own,
  a marker such as ``BoxTensor`` made with ``as_subclass``) given to the compiled function: a Python
  number on the left of ``-``, ``/``, ``//``, ``%`` or ``**`` with an instance (or a tensor computed
  from one: the subclass spreads through operators) on the right breaks the graph ("All
  __torch_function__ overrides returned NotImplemented"); ``t - 1``, ``1 + t``, ``2 * t``, ``-t``,
  ``torch.sub(1, t)`` and operators between two tensors are traced.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code

WRAPPER_WHY = ("`{cls}` is a tensor subclass with `__torch_dispatch__` but no `__tensor_flatten__`/"
               "`__tensor_unflatten__`, so Dynamo cannot trace an operator on it")
FIX_WRAPPER = ("Make it a traceable wrapper subclass (define `__tensor_flatten__` and `__tensor_unflatten__`), or "
               "unwrap it in the eager code before the compiled call (dequantize the weight once)")
PLAIN_WHY = ("a Python number on the left of `{op}` with the `torch.Tensor` subclass `{cls}` on the right: Dynamo's "
             "reflected operator on a subclass fails (\"All __torch_function__ overrides returned NotImplemented\")")
FIX_PLAIN = ("Pass a plain tensor (`t.as_subclass(torch.Tensor)` in the eager code before the call), or keep the "
             "tensor on the left (`-g + 1`, `torch.sub(1, g)`)")
REFLECTED = {cst.Subtract: "-", cst.Divide: "/", cst.FloorDivide: "//", cst.Modulo: "%", cst.Power: "**"}
TENSOR_BASES = frozenset({"torch.Tensor", "Tensor"})
# reads of a subclass tensor that give no tensor (the subclass does not spread through them)
NOT_TENSOR_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "requires_grad", "is_cuda", "layout"})
NOT_TENSOR_METHODS = frozenset({"size", "dim", "numel", "item", "tolist", "element_size", "stride",
                                "as_subclass"})
NOT_TENSOR_CALLS = frozenset({"len", "int", "float", "bool", "isinstance", "type", "str", "id"})
MOVES = frozenset({"to", "cuda", "cpu", "float", "half", "double", "detach", "clone", "contiguous",
                   "requires_grad_", "pin_memory"})


class Subclasses:
    """Tensor subclasses the file defines, where instances are made and kept, and the calls that
    pass them (collected while the file is walked, asked after it)."""

    def __init__(self) -> None:
        self.kinds: dict = {}  # class name -> "wrapper" / "plain"
        self.held: dict = {}  # name, or (class, attribute) for `self.attr`, -> the subclass made there
        self.calls: list = []  # calls of a plain name (`loss_fn(pred, target)`)
        self.compiled: dict = {}  # name bound to `torch.compile(f)` -> f
        self.taints: dict = {}  # id(function scope) -> {name: subclass}

    def class_def(self, an, node: cst.ClassDef) -> None:
        if not any((an.qualname(b.value) or code(b.value)) in TENSOR_BASES for b in node.bases):
            return
        methods = {st.name.value for st in node.body.body if type(st) is cst.FunctionDef}
        if "__torch_dispatch__" in methods:
            if "__tensor_flatten__" not in methods:
                self.kinds[node.name.value] = "wrapper"
        elif "__torch_function__" not in methods:
            self.kinds[node.name.value] = "plain"

    def assign(self, an, node: cst.Assign, compiled_call: bool) -> None:
        if compiled_call and type(node.value.args[0].value) is cst.Name:
            for t in node.targets:
                if type(t.target) is cst.Name:
                    self.compiled[t.target.value] = node.value.args[0].value.value
        cls = self.made(node.value)
        if cls is None:
            return
        fn = an.function
        for t in node.targets:
            if type(t.target) is cst.Name:
                self.held[t.target.value] = cls
            elif type(t.target) is cst.Attribute and code(t.target.value) == "self" and fn.cls is not None:
                self.held[(fn.cls.name, t.target.attr.value)] = cls

    def call(self, node: cst.Call) -> None:
        if self.kinds and type(node.func) is cst.Name:
            self.calls.append(node)

    def made(self, expr: cst.BaseExpression) -> Optional[str]:
        """The subclass `Cls(...)` or `t.as_subclass(Cls)` (then `.to(device)`...) makes, or None."""
        while type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in MOVES:
            expr = expr.func.value
        if type(expr) is not cst.Call:
            return None
        func = expr.func
        if type(func) is cst.Name and func.value in self.kinds:
            return func.value
        if type(func) is cst.Attribute and func.attr.value == "as_subclass" and len(expr.args) == 1 \
                and type(expr.args[0].value) is cst.Name and expr.args[0].value.value in self.kinds:
            return expr.args[0].value.value
        return None

    # --- questions, after the walk -----------------------------------------------------------------

    def wrapper_use(self, fn, node: cst.CSTNode) -> Optional[str]:
        """The wrapper subclass an operator (`a @ b`) or call (`F.linear(x, w)`) takes directly."""
        operands = [node.left, node.right] if type(node) is cst.BinaryOperation else \
            [a.value for a in node.args] if type(node) is cst.Call else []
        taint = self._taint(fn)
        for e in operands:
            cls = self._direct(fn, e, taint)
            if cls is not None and self.kinds.get(cls) == "wrapper":
                return cls
        return None

    def reflected(self, fn, node: cst.BinaryOperation) -> Optional[tuple]:
        """(operator, subclass) for `1 - t` with `t` a plain subclass tensor, or None."""
        op = REFLECTED.get(type(node.operator))
        left = node.left.expression if type(node.left) is cst.UnaryOperation else node.left
        if op is None or type(left) not in (cst.Integer, cst.Float):
            return None
        cls = _mentions(node.right, self._taint(fn), self._attr_class(fn))
        return (op, cls) if cls is not None and self.kinds.get(cls) == "plain" else None

    def _attr_class(self, fn):
        cls = fn.cls.name if fn.cls is not None else None
        return lambda attr: self.held.get((cls, attr)) if cls is not None else None

    def _direct(self, fn, e: cst.BaseExpression, taint: dict) -> Optional[str]:
        if type(e) is cst.Name:
            return taint.get(e.value)
        if type(e) is cst.Attribute and code(e.value) == "self":
            return self._attr_class(fn)(e.attr.value)
        return None

    def _taint(self, fn) -> dict:
        """Names of the function that hold a subclass tensor: its parameters the calls give one,
        and what it computes from them (assignments in order, twice for loops)."""
        got = self.taints.get(id(fn))
        if got is not None:
            return got
        taint: dict = {}
        self.taints[id(fn)] = taint
        node = fn.node
        if type(node) is not cst.FunctionDef:
            return taint
        params = [p.name.value for p in node.params.params]
        names = {node.name.value} | {k for k, v in self.compiled.items() if v == node.name.value}
        for call in self.calls:
            if call.func.value not in names:
                continue
            for i, a in enumerate(a for a in call.args if a.keyword is None and not a.star):
                cls = self.made(a.value) or (self.held.get(a.value.value) if type(a.value) is cst.Name else None)
                if cls is not None and i < len(params):
                    taint[params[i]] = cls
        if not taint and not any(isinstance(k, tuple) and k[0] == getattr(fn.cls, "name", None) for k in self.held):
            return taint
        attr_class = self._attr_class(fn)
        assigns = [n for n in _statements(node.body) if type(n) in (cst.Assign, cst.AugAssign)]
        for _ in range(2):
            for a in assigns:
                cls = _mentions(a.value, taint, attr_class)
                if cls is None:
                    continue
                targets = [t.target for t in a.targets] if type(a) is cst.Assign else [a.target]
                for t in targets:
                    for n in _target_names(t):
                        taint[n] = cls
        return taint


def _statements(body) -> list:
    """Small statements of a function body, nested blocks included, not nested functions."""
    out, stack = [], [body]
    while stack:
        n = stack.pop(0)
        if type(n) in (cst.FunctionDef, cst.ClassDef):
            continue
        if isinstance(n, cst.BaseSmallStatement):
            out.append(n)
            continue
        stack[:0] = list(n.children)
    return out


def _target_names(t: cst.BaseExpression) -> list:
    if type(t) is cst.Name:
        return [t.value]
    if type(t) in (cst.Tuple, cst.List):
        return [n for e in t.elements for n in _target_names(e.value)]
    return []


def _mentions(expr: cst.CSTNode, taint: dict, attr_class) -> Optional[str]:
    """The subclass of a tensor the expression computes from, or None (not through `.shape`,
    `.size()`, `len()`... nor inside a lambda)."""
    if type(expr) is cst.Name:
        return taint.get(expr.value)
    if type(expr) is cst.Lambda:
        return None
    if type(expr) is cst.Attribute:
        if expr.attr.value in NOT_TENSOR_ATTRS:
            return None
        if code(expr.value) == "self":
            return attr_class(expr.attr.value)
    if type(expr) is cst.Call:
        func = expr.func
        if type(func) is cst.Attribute and func.attr.value in NOT_TENSOR_METHODS:
            return None
        if type(func) is cst.Name and func.value in NOT_TENSOR_CALLS:
            return None
    for child in expr.children:
        cls = _mentions(child, taint, attr_class)
        if cls is not None:
            return cls
    return None
