"""Iterators and host lists Dynamo cannot trace, for HPU012 (measured on torch 2.13, CPU, ``eager``
backend; docs/compile-target.md has the table):

- ``next(it)`` inside the compiled function on an iterator made outside it: a module-level
  ``iter(loader)`` of a ``DataLoader`` ("Attempted to inline function marked as skipped"), an
  ``iter()`` of a list, or a generator ("Missing tp_iternext"); and a ``for`` over a module-level
  ``DataLoader`` inside it. An ``iter()`` of the function's own list argument is traced (no break).
- sorting Python numbers read from a tensor inside the compiled function (``sorted(row)``,
  ``sorted(range(n), key=row.__getitem__)``, ``vals.sort()``, ``max(..., key=...)`` over the values
  of a ``.tolist()``): "sort with non-constant keys" once the numbers are dynamic, that is from the
  second call with other values on (the first compile of the resume function takes them as
  constants). ``min(row)`` without a key is traced. A sort of a constant list is traced.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, names_in

LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
NEXT_WHY = ("Dynamo cannot step an iterator made outside the compiled function ({how}: \"{reason}\")")
FIX_NEXT = ("Draw the batch with `next()` in the eager code and pass it to the compiled function as "
            "arguments (compile the step, not the data loading)")
LOOP_WHY = ("Dynamo does not trace the iteration of a `DataLoader` (\"Attempted to inline function marked as "
            "skipped\"): the loop runs in Python")
SORT_WHY = ("Dynamo cannot sort Python numbers it tracks symbolically (\"sort with non-constant keys\"), and "
            "these come from a tensor (`.tolist()`): the first compile takes them as constants, the recompile "
            "for the next values makes them dynamic")
FIX_SORT = ("Sort or rank on the tensor (`torch.sort`, `torch.argsort`, `topk`, `argmin` over a masked cost), or "
            "do the matching in the eager code around the compiled function")
SEND_WHY = ("Dynamo cannot resume a generator made outside the compiled function (`send()` on it: \"call_method on "
            "generator\")")
FIX_SEND = ("Return the value and send it into the generator in the eager code around the compiled call (or keep "
            "the running values in tensors the step returns)")
SORTS = frozenset({"sorted"})
KEYED = frozenset({"min", "max"})


class Iterators:
    """Module-level names bound to a DataLoader, an ``iter(...)`` or a generator of the file; and,
    per function, the names bound to Python numbers read from a tensor (``.tolist()``)."""

    def __init__(self) -> None:
        self.made: dict = {}  # module-level name -> "loader" / "iter:<what>" / "generator"
        self.functions: dict = {}  # name -> the scope of a function of the file (`.yields` after its walk)
        self.host: dict = {}  # id(function scope) -> names holding `.tolist()` values
        self.attrs: dict = {}  # (class name, attribute) -> "call:<function>": `self.avg = running_average()`

    def function_def(self, an, node: cst.FunctionDef) -> None:
        """Keep the function's scope: the walk marks it a generator when it meets a `yield` in it."""
        self.functions[node.name.value] = an.function

    def assign(self, an, node: cst.Assign) -> None:
        fn = an.function
        value = node.value
        names = [t.target.value for t in node.targets if type(t.target) is cst.Name]
        if fn.kind == "module" and type(value) is cst.Call:
            qn = an.qualname(value.func) or ""
            what = None
            if qn in LOADERS:
                what = "loader"
            elif type(value.func) is cst.Name and value.func.value == "iter" and value.args:
                inner = value.args[0].value
                what = "iter:" + (self.made.get(inner.value, "") if type(inner) is cst.Name else "")
            elif type(value.func) is cst.Name:
                what = "call:" + value.func.value  # a generator if the function yields (known after the walk)
            for n in names:
                if what is not None:
                    self.made[n] = what
        if fn.kind == "function" and fn.cls is not None and type(value) is cst.Call and type(value.func) is cst.Name:
            for t in node.targets:
                if type(t.target) is cst.Attribute and code(t.target.value) == "self":
                    self.attrs[(fn.cls.name, t.target.attr.value)] = "call:" + value.func.value
        if fn.kind == "function" and self.host_value(fn, value):
            for t in node.targets:
                self.host.setdefault(id(fn), set()).update(names_in(t.target))

    def for_loop(self, an, node: cst.For) -> None:
        fn = an.function
        if fn.kind != "function":
            return
        it = node.iter
        target = node.target
        if type(it) is cst.Call and type(it.func) is cst.Name and it.func.value == "enumerate" and it.args:
            it = it.args[0].value
            if type(target) is cst.Tuple and len(target.elements) == 2:
                target = target.elements[1].value
        if self.host_value(fn, it):
            self.host.setdefault(id(fn), set()).update(names_in(target))

    def host_value(self, fn, value: cst.BaseExpression) -> bool:
        """`t.tolist()`, or a name (or an item of one) holding such values."""
        while type(value) is cst.Subscript:
            value = value.value
        if type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value == "tolist" \
                and not value.args:
            return True
        return type(value) is cst.Name and value.value in self.host.get(id(fn), ())

    # --- questions ----------------------------------------------------------------------------------

    def next_call(self, fn, node: cst.Call) -> Optional[tuple]:
        """(what is said, why) for `next(it)` on an iterator made outside the function, after the walk."""
        if type(node.func) is not cst.Name or node.func.value != "next" or not node.args:
            return None
        it = node.args[0].value
        what = None
        if type(it) is cst.Name and it.value not in fn.bindings and it.value not in fn.params:
            what = self.made.get(it.value)
        elif type(it) is cst.Call and type(it.func) is cst.Name and it.func.value == "iter" and it.args \
                and type(it.args[0].value) is cst.Name and it.args[0].value.value not in fn.bindings:
            what = "iter:" + self.made.get(it.args[0].value.value, "")
            if what != "iter:loader":
                return None
        if what is not None and what.startswith("call:"):
            scope = self.functions.get(what[5:])
            what = "generator" if scope is not None and scope.yields else None
        if what is None or what == "loader":
            return None
        if what == "iter:loader":
            how, reason = "a `DataLoader`'s iterator", "Attempted to inline function marked as skipped"
        elif what == "generator":
            how, reason = "a generator", "Missing tp_iternext"
        else:
            how, reason = "an `iter()`", "Missing tp_iternext"
        return f"`{code(node)}`", NEXT_WHY.format(how=how, reason=reason)

    def send_call(self, fn, node: cst.Call) -> Optional[tuple]:
        """(what is said, why, fix, check) for `gen.send(v)` on a name or `self` attribute bound
        outside the function to a call of a function of the file; the check (after the walk): that
        function is a generator."""
        func = node.func
        if type(func) is not cst.Attribute or func.attr.value != "send" or len(node.args) != 1:
            return None
        recv = func.value
        what = None
        if type(recv) is cst.Name and recv.value not in fn.bindings and recv.value not in fn.params:
            what = self.made.get(recv.value)
        elif type(recv) is cst.Attribute and code(recv.value) == "self" and fn.cls is not None:
            what = self.attrs.get((fn.cls.name, recv.attr.value))
        if what is None or not what.startswith("call:"):
            return None

        def check(name=what[5:]):
            scope = self.functions.get(name)
            return scope is not None and scope.yields
        return f"`{code(func)}(...)`", SEND_WHY, FIX_SEND, check

    def loader_loop(self, fn, node: cst.For) -> Optional[tuple]:
        it = node.iter
        if type(it) is cst.Name and it.value not in fn.bindings and self.made.get(it.value) == "loader":
            return f"`for ... in {it.value}`", LOOP_WHY
        return None

    def sort_call(self, fn, node: cst.Call) -> bool:
        """`sorted(...)`, `x.sort()`, `min/max(..., key=...)` over numbers read from a tensor."""
        host = self.host.get(id(fn), set())
        if not host:
            return False
        func = node.func
        if type(func) is cst.Attribute and func.attr.value == "sort" and type(func.value) is cst.Name:
            return func.value.value in host
        if type(func) is not cst.Name or (func.value not in SORTS and func.value not in KEYED):
            return False
        if func.value in KEYED and not any(a.keyword is not None and a.keyword.value == "key" for a in node.args):
            return False
        return any(n in host for a in node.args
                   for n in names_in(a.value.body if type(a.value) is cst.Lambda else a.value))
