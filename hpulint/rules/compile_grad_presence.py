"""A compiled function that skips parameters whose ``.grad`` is None, given parameters of a module
whose forward leaves a different set of them unused each step, for HPU017.

Dynamo guards on which tensors it reads are None: ``p.grad is None`` is decided while tracing, so
each new pattern of missing gradients is a new graph. The pattern changes from step to step when
the module runs only some of its submodules, picked by the data (a mixture of experts running the
experts its router chose: ``for e in choice.unique().tolist(): self.experts[e](...)``) or at random
(LayerDrop: ``if random.random() < p: continue``), and the gradients are reset to None between steps
(``zero_grad()``, ``set_to_none=True`` by default). Measured on torch 2.13 (CPU, ``eager`` backend):
a compiled ``[p.grad.norm() for p in params if p.grad is not None]`` over 8 steps of a top-1 MoE or
of a LayerDrop stack is 5 graphs and 4 recompiles (guard at the test); the same with every block run,
1 graph; with ``zero_grad(set_to_none=False)``, 2 graphs (once a gradient exists it stays a tensor).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, names_in, target_names

DATA_PICKS = (".tolist()", ".unique(", ".nonzero(", "torch.unique(", ".item()")
RANDOM_TESTS = ("random.", "torch.rand", "bernoulli")
MESSAGE = (
    "The compiled `{name}` tests `{test}` on the parameters it is given (`{arg}`), and `{cls}.forward` runs only "
    "some of its submodules each step ({how}), so a different set of gradients is None after each backward: Dynamo "
    "guards on which tensors are None, so each new pattern is a new graph, and after `recompile_limit` ({limit}) patterns it "
    "runs the function eagerly for the rest of the run. Pass only tensors (`p.grad if p.grad is not None else "
    "torch.zeros_like(p)` in the eager caller, or `zero_grad(set_to_none=False)` so unused parameters keep a zero "
    "gradient)"
)


def grad_presence(module: cst.Module, compiled: dict, definition, loop_calls: list, limit: int) -> list:
    """(grad test, message) for each compiled callable (``definition(name)`` -> (FunctionDef, skip))
    that tests `<param>.grad is None` on the items of a parameter, called in a loop (``loop_calls``:
    (call, callee) pairs) with the parameters of an instance of a class of the file whose forward
    runs a data- or random-picked subset of its submodules."""
    if module is None or not compiled or _grads_kept(module):
        return []
    sparse = _sparse_classes(module)
    if not sparse:
        return []
    instances = _instances(module, sparse)
    out, done = [], set()
    for call, callee in loop_calls:
        if callee not in compiled or callee in done:
            continue
        fn, _ = definition(callee)
        test = _grad_test(fn) if fn is not None else None
        if test is None:
            continue
        for a in call.args:
            cls = next((instances[n] for n in _roots(module, a.value) if n in instances), None)
            if cls is not None:
                done.add(callee)
                out.append((test, MESSAGE.format(name=callee, test=code(test), arg=code(a.value), cls=cls,
                                                 how=sparse[cls], limit=limit)))
                break
    return out


def _grads_kept(module: cst.Module) -> bool:
    """Every `zero_grad(...)` of the file passes `set_to_none=False` (and there is one)."""
    calls = [n for n in descendants(module) if type(n) is cst.Call and type(n.func) is cst.Attribute
             and n.func.attr.value == "zero_grad"]
    return bool(calls) and all(any(a.keyword is not None and a.keyword.value == "set_to_none"
                                   and code(a.value) == "False" for a in c.args) for c in calls)


def _sparse_classes(module: cst.Module) -> dict:
    """Class name -> how its `forward` picks submodules: an item of a `self.<attr>` container indexed by
    a loop target walking values read from a tensor, or a loop over `self.<attr>` that tests a random draw."""
    out = {}
    for cls in (n for n in descendants(module) if type(n) is cst.ClassDef):
        fwd = next((st for st in cls.body.body if type(st) is cst.FunctionDef and st.name.value == "forward"), None)
        if fwd is None:
            continue
        for loop in (n for n in descendants(fwd.body) if type(n) is cst.For):
            it = code(loop.iter)
            targets = set(target_names(loop.target))
            if any(p in it for p in DATA_PICKS):
                for n in descendants(loop.body):
                    if type(n) is cst.Call and type(n.func) is cst.Subscript and code(n.func.value).startswith("self.") \
                            and set(names_in(n.func.slice[0].slice)) & targets:
                        out.setdefault(cls.name.value, f"`{code(n.func)}` for `{code(loop.target)} in {it}`")
            elif it.startswith("self.") or it.startswith("enumerate(self.") or it.startswith("zip(self."):
                test = next((n.test for n in descendants(loop.body) if type(n) is cst.If
                             and any(r in code(n.test) for r in RANDOM_TESTS)), None)
                if test is not None:
                    out.setdefault(cls.name.value, f"a loop over `{it}` that tests `{code(test)}`")
    return out


def _instances(module: cst.Module, classes: dict) -> dict:
    """Module-level name -> class, for `name = Cls(...)` (or `Cls(...).to(...)`) of those classes."""
    out = {}
    for st in module.body:
        for small in st.body if type(st) is cst.SimpleStatementLine else ():
            if type(small) is not cst.Assign or type(small.value) is not cst.Call:
                continue
            made = small.value
            while type(made.func) is cst.Attribute and type(made.func.value) is cst.Call:
                made = made.func.value  # `Cls(...).to(device)`
            if type(made.func) is cst.Name and made.func.value in classes:
                for t in small.targets:
                    out.update({n: made.func.value for n in target_names(t.target)})
    return out


def _roots(module: cst.Module, expr: cst.BaseExpression) -> set:
    """The names ``expr`` is made of, through module-level assignments (`params = [p for e in model.experts
    for p in e.parameters()]` -> `model`)."""
    bound = {}
    for st in module.body:
        for small in st.body if type(st) is cst.SimpleStatementLine else ():
            if type(small) is cst.Assign:
                for t in small.targets:
                    for n in target_names(t.target):
                        bound.setdefault(n, small.value)
    out, stack = set(), list(names_in(expr))
    while stack:
        name = stack.pop()
        if name in out:
            continue
        out.add(name)
        if name in bound:
            stack += names_in(bound[name])
    return out


def _grad_test(fn: cst.FunctionDef) -> Optional[cst.Comparison]:
    """`p.grad is None` / `is not None` in ``fn`` on an item of one of its parameters (a comprehension's or
    a loop's target over it)."""
    params = {p.name.value for p in fn.params.params}
    items = set()
    for n in descendants(fn.body):
        if type(n) in (cst.CompFor, cst.For) and set(names_in(n.iter)) & params:
            items |= set(target_names(n.target))
    for n in descendants(fn.body):
        if type(n) is cst.Comparison and type(n.left) is cst.Attribute and n.left.attr.value == "grad" \
                and type(n.left.value) is cst.Name and n.left.value.value in items and len(n.comparisons) == 1 \
                and type(n.comparisons[0].operator) in (cst.Is, cst.IsNot) and code(n.comparisons[0].comparator) == "None":
            return n
    return None
