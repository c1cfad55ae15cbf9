"""Module arguments of one class made with different ints, each passed to one compiled function,
for HPU017. Measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md):

``@torch.compile def run_block(block, x): return block(x)`` called with each block of a stack built
as ``Block(16, 2 ** i) for i in range(10)``: Dynamo guards on the module argument's int attributes
by value (``block.shift == 1``, and the ``dilation``/``padding`` of a conv built from the int:
``block._modules['conv'].dilation == (2,)``, a guard in torch's own conv code), so each block's
value is a recompile: 10 blocks, 8 graphs, 7 recompiles and an eager fallback. The same blocks all
built with one value, 1 graph (and one recompile when the input starts to require grad); the stack
compiled as one module, 1 graph (Dynamo inlines every block with its own values). An int that sets
a parameter's shape (a ``Linear``'s width, a conv's ``kernel_size``) recompiles too, on the
parameter's size (a shape guard): not reported here.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, names_in
from hpulint.rules.compile_value_forms import _has_float
from hpulint.rules.compiled_region import MANY, distinct_values, recompiles_text

MODULE_ARG = (
    "`{arg}` is each module of `{stack}`, built as `{made}` for each `{counter}` in `{it}`, and `{param}` "
    "{use}: Dynamo guards on a module argument's int attributes by value, so the compiled `{name}` "
    "{values}. Compile the stack as one module whose forward runs every "
    "block (Dynamo inlines each with its own values: one graph), or keep the value in a tensor buffer"
)
CONTAINERS = ("ModuleList", "Sequential", "list", "tuple")
# keywords of torch.nn layers kept as int attributes that set no parameter's shape
LAYER_INTS = frozenset({"dilation", "padding", "stride", "output_padding", "num_heads", "dim"})


def module_argument(module: cst.Module, fn: cst.FunctionDef, call: cst.Call, loop_node, limit: int):
    """The message for a call of the compiled ``fn`` inside ``loop_node`` (a `for` over a stack of
    modules) that passes, for a parameter ``fn`` calls, each module of a stack built from one class
    with an int that takes 3 or more values, or None."""
    if type(loop_node) is not cst.For or type(loop_node.target) is not cst.Name:
        return None
    item = loop_node.target.value
    params = [p.name.value for p in fn.params.params]
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    k = next((i for i, a in enumerate(positional) if type(a) is cst.Name and a.value == item), None)
    if k is None or k >= len(params) or not _calls(fn, params[k]):
        return None
    stack = loop_node.iter
    built = _stack_value(module, stack)
    if built is None:
        return None
    made, counter, it = built
    classes = {st.name.value: st for st in module.body if type(st) is cst.ClassDef}
    cls = classes.get(made.func.value) if type(made.func) is cst.Name else None
    if cls is None:
        return None
    init = next((st for st in cls.body.body if type(st) is cst.FunctionDef and st.name.value == "__init__"), None)
    if init is None:
        return None
    init_params = [p.name.value for p in init.params.params][1:]
    for j, a in enumerate(made.args):
        if a.star or counter not in set(names_in(a.value)) or _has_float(a.value):
            continue
        param = a.keyword.value if a.keyword is not None else init_params[j] if j < len(init_params) else None
        use = _guarded_use(cls, init, param) if param is not None else None
        if use is None:
            continue
        n = distinct_values(it)
        if n is not None and n < MANY:
            return None
        values = f"takes {recompiles_text(n, limit)}" if n is not None else (
            "recompiles for each new value, and after `recompile_limit` (8) runs eagerly for the rest of the "
            "run (eager fallback)")
        return MODULE_ARG.format(arg=item, stack=code(stack), made=code(made), counter=counter, it=code(it),
                                 param=param, use=use, name=fn.name.value, values=values)
    return None


def _calls(fn: cst.FunctionDef, param: str) -> bool:
    """``fn`` calls its parameter ``param`` (`block(x)`, `block.forward(x)`)."""
    for n in descendants(fn.body):
        if type(n) is cst.Call:
            f = n.func
            if type(f) is cst.Name and f.value == param:
                return True
            if type(f) is cst.Attribute and f.attr.value == "forward" and type(f.value) is cst.Name \
                    and f.value.value == param:
                return True
    return False


def _stack_value(module: cst.Module, stack: cst.BaseExpression) -> Optional[tuple]:
    """(constructor call, comprehension target, what it iterates) for a stack of modules built by a
    comprehension (`nn.ModuleList(Block(i) for i in range(10))`, `[Block(i) for i in ...]`,
    `nn.Sequential(*[...])`), named by a module-level assignment or written in the loop."""
    value = stack
    if type(stack) is cst.Name:
        value = None
        for st in module.body:
            for small in st.body if type(st) is cst.SimpleStatementLine else ():
                if type(small) is cst.Assign and len(small.targets) == 1 \
                        and type(small.targets[0].target) is cst.Name and small.targets[0].target.value == stack.value:
                    value = small.value
    for _ in range(2):
        if type(value) is cst.Call and value.args and code(value.func).rsplit(".", 1)[-1] in CONTAINERS:
            value = value.args[0].value  # nn.ModuleList(<comprehension>), nn.Sequential(*[...])
    if type(value) not in (cst.ListComp, cst.GeneratorExp) or type(value.elt) is not cst.Call:
        return None
    f = value.for_in
    if f.inner_for_in is not None or type(f.target) is not cst.Name:
        return None
    return value.elt, f.target.value, f.iter


def _guarded_use(cls: cst.ClassDef, init: cst.FunctionDef, param: str) -> Optional[str]:
    """How the class keeps ``param`` where Dynamo guards on it: stored as `self.<attr>` that its
    forward reads, or given to a torch.nn layer it builds (its attributes and parameter shapes)."""
    forward = next((st for st in cls.body.body if type(st) is cst.FunctionDef and st.name.value == "forward"), None)
    stored, layers = set(), []
    for n in descendants(init.body):
        if type(n) is cst.Assign and param in set(names_in(n.value)):
            for t in n.targets:
                tg = t.target
                if type(tg) is cst.Attribute and type(tg.value) is cst.Name and tg.value.value == "self":
                    if type(n.value) is cst.Call and code(n.value.func).startswith(("nn.", "torch.nn.")):
                        layers += [(n.value, a.keyword.value) for a in n.value.args if a.keyword is not None
                                   and a.keyword.value in LAYER_INTS and param in set(names_in(a.value))]
                    elif type(n.value) is not cst.Call:
                        stored.add(tg.attr.value)
    if forward is not None:
        for n in descendants(forward.body):
            if type(n) is cst.Attribute and type(n.value) is cst.Name and n.value.value == "self" \
                    and n.attr.value in stored:
                return f"is read as `self.{n.attr.value}` in its forward()"
    if layers:
        layer, key = layers[0]
        return f"is the `{key}` of `{code(layer.func)}(...)`, a layer it builds"
    return None
