"""A compiled module whose ModuleList, Sequential or ModuleDict a loop grows between its calls, for HPU016.

Dynamo guards on the number of children of every container module ``forward`` walks
(``len(self._modules['blocks']._modules) != 1``), so each new length is a new graph. Measured on
torch 2.13 (CPU, ``eager`` backend): a progressive-growing generator compiled once whose ``grow()``
appends a block to its ``nn.ModuleList`` at each of 4 stages is 4 graphs and 3 recompiles; the same
with ``blocks.append``/``extend`` on the compiled module's attribute in the loop, with a new key in an
``nn.ModuleDict`` per task (3 tasks: 3 graphs), and also with a fresh ``torch.compile(gen)`` per stage
(the cache is ``forward``'s); grown twice, one recompile (not reported); grown before compiling, one
graph; ``torch._dynamo.reset()`` before each stage, no recompile (a fresh compile each time).
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import code, descendants, loop_head
from hpulint.rules.compile_loop_reach import first_call_of, repeated_loops, roots

CONTAINERS = frozenset({"ModuleList", "Sequential", "ModuleDict"})
GROWERS = frozenset({"append", "extend", "insert", "add_module", "register_module", "update"})
MESSAGE = (
    "`{compiled}` runs `{module}`, whose `{attr}` {how} grows on every pass of `{loop}`: Dynamo guards on the "
    "number of modules in each container `forward` walks (\"len(self._modules['{attr}']._modules) != ...\"), "
    "so each new length is a new graph ({n}), and after `recompile_limit` (8) Dynamo runs `forward` eagerly for "
    "the rest of the run. Build the full model before compiling (the unused blocks skipped by a tensor weight, "
    "as ProGAN's fade-in alpha), or call `torch._dynamo.reset()` when it grows so that each stage is a fresh "
    "compile, not a recompile"
)


def grown_modules(an, module: cst.Module, compiled_of: dict) -> list:
    """(call of the compiled module in the loop, message) for a loop of 3 or more passes (or an
    unknown number) that calls a compiled module and grows one of its container submodules: a
    method of the file's classes that appends to `self.<container>` called on the compiled
    instance, or `<instance>.<container>.append(...)` in the loop (or in a function it calls)."""
    if module is None or not compiled_of:
        return []
    classes = [n for n in descendants(module) if type(n) is cst.ClassDef]
    containers, growers = _class_facts(classes)
    module_classes = {n.name.value for n in classes
                      if any(code(b.value).endswith(("Module", "ModuleList", "Sequential")) for b in n.bases)}
    out, done = [], set()
    for loop, n, reached in repeated_loops(an, module):
        for call, bind, scope in reached:
            func = call.func
            if type(func) is not cst.Attribute:
                continue
            hit = None
            if func.attr.value in growers:  # `gen.grow()`
                hit = (func.value, growers[func.attr.value], f"(through `{code(func)}()`)")
            elif func.attr.value in GROWERS and type(func.value) is cst.Attribute \
                    and (func.value.attr.value in containers or _module_made(an, call, module_classes)):
                hit = (func.value.value, func.value.attr.value, f"(`{code(func)}(...)`)")
            if hit is None:
                continue
            owner, attr, how = hit
            names = roots(owner, bind, scope)
            targets = {name for name, inst in compiled_of.items() if inst in names or name in names}
            site = first_call_of(loop, targets)
            if site is None or id(site) in done:
                continue
            done.add(id(site))
            said = f"at least {n - 1} graphs" if n is not None else "a recompile for each"
            out.append((site, MESSAGE.format(compiled=code(site.func), module=compiled_of.get(code(site.func)),
                                             attr=attr, how=how, loop=loop_head(loop), n=said)))
            break
    return out


def _class_facts(classes: list) -> tuple:
    """(attributes some `__init__` sets to an nn.ModuleList/Sequential/ModuleDict, method name ->
    the container attribute it grows), over the file's classes."""
    containers, growers = set(), {}
    for cls in classes:
        for n in descendants(cls):
            if type(n) is cst.Assign and type(n.value) is cst.Call and len(n.targets) == 1 \
                    and code(n.value.func).rsplit(".", 1)[-1] in CONTAINERS:
                t = n.targets[0].target
                if type(t) is cst.Attribute and code(t.value) == "self":
                    containers.add(t.attr.value)
    for cls in classes:
        for st in cls.body.body:
            if type(st) is not cst.FunctionDef or st.name.value in ("__init__", "forward"):
                continue
            for n in descendants(st.body):
                grown = _grown_attr(n, containers)
                if grown is not None:
                    growers.setdefault(st.name.value, grown)
    return containers, growers


def _grown_attr(n: cst.CSTNode, containers: set):
    """The container attribute `self.<attr>.append(...)` / `self.<attr>[k] = ...` grows, or None."""
    if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in GROWERS:
        held = n.func.value
        if type(held) is cst.Attribute and code(held.value) == "self" and held.attr.value in containers:
            return held.attr.value
    if type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Subscript:
        held = n.targets[0].target.value
        if type(held) is cst.Attribute and code(held.value) == "self" and held.attr.value in containers:
            return held.attr.value
    return None


def _module_made(an, call: cst.Call, classes: set) -> bool:
    """`x.append(Block(...))`, `x.extend([nn.Linear(...)])`: the argument builds a module (a torch.nn
    class, or a class of the file made from one)."""
    for a in call.args:
        for n in descendants(a.value):
            if type(n) is not cst.Call:
                continue
            qn = an.qualname(n.func) or ""
            leaf = qn.rsplit(".", 1)[-1]
            if (qn.startswith("torch.nn.") and leaf[:1].isupper()) or \
                    (type(n.func) is cst.Name and n.func.value in classes):
                return True
    return False
