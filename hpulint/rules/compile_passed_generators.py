"""A ``torch.Generator``, or a Python generator object, handed to a compiled function, for HPU012.

``torch.randn(shape, generator=generator)`` inside a compiled function whose ``generator`` is a
parameter: what callers give is known only at the calls. When a call of the compiled callable
passes a ``torch.Generator`` for that parameter (made by ``torch.Generator(...)``, seeded or not, in
the caller or at module level), Dynamo cannot put it in the graph ("Missing `as_proxy()`
implementation"): a graph break at the random op, on every call (measured on torch 2.13, CPU:
a denoising step compiled with ``torch.compile(step)`` and called with a seeded generator, 2 graphs
and 1 break at the draw; the same step given the noise drawn outside, 1 graph). A parameter left at
its ``None`` default by every call is a pass-through: no break, not reported.

A Python generator object given for a parameter the compiled function iterates (``for p in
parameters``, ``[... for p in parameters]``, ``sum(... for p in parameters)``): a call that passes
``model.parameters()`` (or ``named_parameters()``, ``buffers()``, ``modules()``, ``children()``...), a
generator expression, or a name bound to one. Dynamo cannot iterate a generator made outside the
region ("Dynamo does not know how to iterate over `UserDefinedObjectVariable(generator)`"): the
break cannot be handled, so Dynamo skips the function and runs it eagerly (measured on torch 2.13,
CPU: a compiled global gradient norm given ``model.parameters()``, 1 break at the comprehension, no
graph; given ``list(model.parameters())``, 1 graph).

Filled while the file is walked (the compiled callables, their calls, the names bound to a
generator); asked after the walk.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import param_names

GENERATOR = "torch.Generator"
_CHAIN = frozenset({"manual_seed", "seed"})  # Generator methods that return the generator
# nn.Module methods that return a Python generator
LAZY_METHODS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers", "children",
                          "named_children", "modules", "named_modules"})
LAZY_WHY = ("Dynamo cannot iterate a Python generator made outside the compiled function (\"Dynamo does not know "
            "how to iterate over `UserDefinedObjectVariable(generator)`\"): it skips the function and runs it eagerly")
FIX_LAZY = ("Give it a list made once in the eager code (`params = [p for p in model.parameters() if "
            "p.requires_grad]`, outside the loop), or a tuple")


class PassedGenerators:
    def __init__(self) -> None:
        self.compiled: dict = {}  # name called -> name of the function of the file it compiles
        self.calls: list = []  # (name called, its args, caller scope)
        self.generators: set = set()  # (scope: id of the function or "module", name) bound to a torch.Generator
        self.lazy: set = set()  # (scope, name) bound to a Python generator object (`model.parameters()`)

    # --- while walking -------------------------------------------------------------------------

    def compiled_def(self, name: str) -> None:
        """``@torch.compile def name(...)``: called by its own name."""
        self.compiled[name] = name

    def compiled_assign(self, node: cst.Assign, call: cst.Call) -> None:
        """``step = torch.compile(fn)``."""
        if not call.args or type(call.args[0].value) is not cst.Name or call.args[0].keyword is not None:
            return
        for t in node.targets:
            if type(t.target) is cst.Name:
                self.compiled[t.target.value] = call.args[0].value.value

    def assign(self, an, node: cst.Assign) -> None:
        kind = self.generators if is_generator(an, node.value) else self.lazy if is_lazy(node.value) else None
        if kind is None:
            return
        for t in node.targets:
            if type(t.target) is cst.Name:
                kind.add((_scope(an.function), t.target.value))

    def call(self, an, node: cst.Call) -> None:
        if type(node.func) is cst.Name:
            self.calls.append((node.func.value, node.args, an.function))

    # --- questions (after the walk) ---------------------------------------------------------------

    def given(self, an, fn, param: str) -> Optional[str]:
        """How a call of a compiled callable of ``fn`` (a plain function of the file) gives a
        generator for its parameter ``param``: the call's text, or None."""
        return self._given(fn, param, lambda arg: is_generator(an, arg), self.generators)

    def lazy_given(self, fn, param: str) -> Optional[str]:
        """The name called when a call of a compiled callable of ``fn`` gives a Python generator
        object for its parameter ``param``; or None."""
        return self._given(fn, param, is_lazy, self.lazy)

    def _given(self, fn, param: str, test, bound: set) -> Optional[str]:
        if fn.kind != "function" or fn.cls is not None or type(fn.node) is not cst.FunctionDef:
            return None
        params = param_names(fn.node)
        if param not in params:
            return None
        index = params.index(param)
        for called, args, scope in self.calls:
            if self.compiled.get(called) != fn.name:
                continue
            arg = _arg_at(args, index, param)
            if arg is None:
                continue
            if test(arg) or (type(arg) is cst.Name and (
                    (_scope(scope), arg.value) in bound or ("module", arg.value) in bound)):
                return called
        return None


def _scope(fn):
    return "module" if fn.kind == "module" else id(fn)


def is_generator(an, value: cst.BaseExpression) -> bool:
    """`torch.Generator(...)`, also seeded: `torch.Generator().manual_seed(s)`."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in _CHAIN:
        value = value.func.value
    return type(value) is cst.Call and (an.qualname(value.func) or "") == GENERATOR


def is_lazy(value: cst.BaseExpression) -> bool:
    """A Python generator object: `model.parameters()` (and the other module iterators), `(... for ...)`."""
    if type(value) is cst.GeneratorExp:
        return True
    return type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in LAZY_METHODS \
        and not value.args


def _arg_at(args, index: int, name: str):
    for a in args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    positional = [a for a in args if a.keyword is None and not a.star]
    return positional[index].value if index < len(positional) else None
