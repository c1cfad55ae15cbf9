"""A compiled module whose layer a loop replaces, between its calls, by a larger one, for HPU016.

Dynamo guards on the parameters a graph reads (their identity and sizes: parameters keep static
shapes), so a submodule replaced by a new layer whose size grows from the old one is a new graph each
time. Measured on torch 2.13 (CPU, ``eager`` backend): a classifier compiled once whose
``widen(k)`` sets ``self.out = nn.Linear(self.out.in_features, self.out.out_features + k)`` at each of
4 stages is 4 graphs and 3 recompiles (no guard line in the file: the failed guard is on the new
parameter's size; the ``def forward`` is where it recompiles); the same method giving a fresh layer
of the same size each stage, 1 graph (the guards on a module's parameters check sizes, not the
object); widened twice, one recompile (not reported).
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import code, descendants, loop_head
from hpulint.rules.compile_loop_reach import first_call_of, repeated_loops, roots

SIZE_FIELDS = frozenset({"in_features", "out_features", "num_embeddings", "embedding_dim", "in_channels",
                         "out_channels", "num_features", "normalized_shape", "shape", "size"})
MESSAGE = (
    "`{compiled}` runs `{module}`, whose `{attr}` is replaced by a larger layer on every pass of `{loop}` (through "
    "`{method}()`: `{made}`): Dynamo guards on the sizes of the parameters a graph reads (parameters keep static "
    "shapes), so each new size is a new graph ({n}), and after `recompile_limit` (8) Dynamo runs `forward` eagerly "
    "for the rest of the run. Allocate the layer at its final size once and mask the rows not yet in use (a large "
    "negative logit for classes not seen yet), or call `torch._dynamo.reset()` when it grows so that each stage is a "
    "fresh compile, not a recompile"
)


def widened_layers(an, module: cst.Module, compiled_of: dict) -> list:
    """(call of the compiled module in the loop, message) for a loop of 3 or more passes (or an
    unknown number) that calls a compiled module and a method of the file's classes that sets
    `self.<attr>` to a new torch.nn layer sized from the old one plus something
    (`old.out_features + n`)."""
    if module is None or not compiled_of:
        return []
    widen = _wideners(an, module)
    if not widen:
        return []
    out, done = [], set()
    for loop, n, reached in repeated_loops(an, module):
        for call, bind, scope in reached:
            func = call.func
            if type(func) is not cst.Attribute or func.attr.value not in widen:
                continue
            attr, made = widen[func.attr.value]
            names = roots(func.value, bind, scope)
            targets = {name for name, inst in compiled_of.items() if inst in names or name in names}
            site = first_call_of(loop, targets)
            if site is None or id(site) in done:
                continue
            done.add(id(site))
            said = f"at least {n - 1} graphs" if n is not None else "a recompile for each"
            out.append((site, MESSAGE.format(compiled=code(site.func), module=compiled_of.get(code(site.func)),
                                             attr=attr, loop=loop_head(loop), method=func.attr.value, made=made,
                                             n=said)))
            break
    return out


def _wideners(an, module: cst.Module) -> dict:
    """Method name -> (attribute, text of the new layer) for methods (not `__init__`/`forward`) that
    assign `self.<attr>` a new torch.nn layer (directly, through `.to(...)` or through a local) with
    a size argument that adds to (or multiplies) a size of the layer it replaces
    (`self.<attr>.out_features + n`, or through a local `old = self.<attr>`)."""
    out = {}
    for cls in (n for n in descendants(module) if type(n) is cst.ClassDef):
        for st in cls.body.body:
            if type(st) is not cst.FunctionDef or st.name.value in ("__init__", "forward"):
                continue
            aliases, layers = {}, {}  # `old = self.head`; `new = nn.Linear(...)`
            for n in descendants(st.body):
                if type(n) is not cst.Assign or len(n.targets) != 1:
                    continue
                t, v = n.targets[0].target, n.value
                if type(t) is cst.Name and type(v) is cst.Attribute and code(v.value) == "self":
                    aliases[t.value] = v.attr.value
                layer = _layer_call(an, v)
                if type(t) is cst.Name and layer is not None:
                    layers[t.value] = layer
                if type(t) is not cst.Attribute or code(t.value) != "self":
                    continue
                layer = layer if layer is not None else layers.get(v.value) if type(v) is cst.Name else None
                if layer is not None and any(_grows_from(a.value, t.attr.value, aliases) for a in layer.args):
                    text = code(layer)
                    out.setdefault(st.name.value, (t.attr.value, text if len(text) <= 70 else text[:67] + "..."))
    return out


def _layer_call(an, v: cst.BaseExpression):
    """The `torch.nn.<Layer>(...)` call ``v`` is, or moves with `.to(...)`, or None."""
    if type(v) is cst.Call and type(v.func) is cst.Attribute and v.func.attr.value == "to":
        v = v.func.value
    return v if type(v) is cst.Call and _nn_layer(an, v) else None


def _nn_layer(an, call: cst.Call) -> bool:
    qn = an.qualname(call.func) or ""
    return qn.startswith("torch.nn.") and qn.rsplit(".", 1)[-1][:1].isupper()


def _grows_from(expr: cst.BaseExpression, attr: str, aliases: dict) -> bool:
    """`old.out_features + n`, `self.head.out_features * 2`: a size of the replaced layer, added to or
    multiplied."""
    if type(expr) is not cst.BinaryOperation or type(expr.operator) not in (cst.Add, cst.Multiply):
        return False
    for side in (expr.left, expr.right):
        for n in descendants(side):
            if type(n) is cst.Attribute and n.attr.value in SIZE_FIELDS:
                held = n.value
                if type(held) is cst.Attribute and held.attr.value == "weight":
                    held = held.value
                if type(held) is cst.Attribute and code(held.value) == "self" and held.attr.value == attr:
                    return True
                if type(held) is cst.Name and aliases.get(held.value) == attr:
                    return True
    return False
