"""Lists a loop passes to a compiled callable that change from one call to the next, for HPU017
(beyond a list name the loop appends to, which HPU017 knows itself):

- **a list of ints drawn at random each pass** (`random.sample(...)`, `random.choices(...)`, through
  `sorted()`/`list()`, or `.tolist()` of a torch random draw such as `torch.randperm(n)[:k]`) that the
  compiled function (or a function of the file it passes it to) indexes a tensor with
  (`x[:, cols]`, `mask[cols] = 1.0`): used as indices the ints are constants of the graph, guarded
  by value, so every call recompiles and after ``recompile_limit`` (8) the function runs eagerly.
  Measured on torch 2.13 (docs/compile-target.md): 12 calls, 8 graphs, 7 recompiles and an eager
  fallback, for `random.sample` and for `torch.randperm(n)[:k].tolist()`; the same draw passed as a
  tensor (`torch.tensor(random.sample(...))`): 1 graph; the list used in arithmetic
  (`sum(cols)`) or turned into a tensor inside (`x[:, torch.tensor(cols)]`): made dynamic, 3 graphs,
  not reported.
- **a list kept on an object and appended to in the loop** (`self.history.append(out)`, then
  `self.update(self.history, x)`): Dynamo guards on a list's length, so each new length is a graph:
  12 calls of a list that keeps growing, 8 graphs and an eager fallback; cut to its last k items
  each pass (`self.history = self.history[-k:]`: a multistep sampler's last outputs), one graph per
  length up to k (k = 4: 4 graphs, 3 recompiles).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import child_nodes, code

RANDOM_LISTS = frozenset({"random.sample", "random.choices"})
TORCH_DRAWS = frozenset({"randperm", "randint", "multinomial", "rand", "randn", "bernoulli"})
WRAPPERS = frozenset({"sorted", "list"})

DRAWN = (
    "`{arg}` is a list of ints drawn at random on every pass{how}, passed to the compiled "
    "`{name}`: Dynamo guards on the values of a list of ints (constants of the graph), so each call recompiles, "
    "and after `recompile_limit` ({limit}) it runs the function eagerly for the rest of the run (eager "
    "fallback). Pass the indices as a tensor (`torch.tensor({arg})`: indexing with it is traced, one graph), "
    "or draw a mask with torch inside the compiled function"
)
GROWS = (
    "the list `{arg}` grows on every pass (`{arg}.{how}()` in the loop), passed to the compiled `{name}`: Dynamo "
    "guards on a list's length, so each call recompiles, and after `recompile_limit` ({limit}) it runs the "
    "function eagerly for the rest of the run (eager fallback). Pass one stacked tensor (its size can be "
    "dynamic) or a fixed-length window"
)
WINDOW = (
    "the list `{arg}` changes length from one call of the compiled `{name}` to the next (`{arg}.{how}()` in "
    "the loop, cut to `{cut}`): Dynamo guards on a list's length, so it compiles the function once for each "
    "length the list takes until it is full. Pad the window to its full length from the first call (zeros "
    "and a count as a tensor), or pass one stacked tensor"
)


def list_argument(rule, loop, call: cst.Call, name: str) -> Optional[str]:
    """The message for a list argument of ``call`` (a call of the compiled ``name`` in ``loop``)
    that changes from one call to the next, or None (``rule``: HPU017, a LoopCalls)."""
    from hpulint.rules.compile_dynamic_branch import compiled_def

    limit = rule.limit
    fdef, skip = compiled_def(rule, name)
    params = [p.name.value for p in fdef.params.params][skip:] if fdef is not None else []
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for a in call.args:
        expr = a.value
        drawn = _drawn(expr) or (_drawn(rule.value_in_loop(expr.value, loop)) if type(expr) is cst.Name else None)
        k = positional.index(a) if a in positional else -1
        param = a.keyword.value if a.keyword is not None else params[k] if 0 <= k < len(params) else None
        if drawn is not None and param is not None and _indexes_with(rule.module, fdef, param):
            how = "" if drawn is expr else f" (`{code(drawn)}` in the loop)"
            return DRAWN.format(arg=code(expr), how=how, name=name, limit=limit)
        if type(expr) is cst.Attribute:
            msg = _grown_attribute(loop, expr, name, limit)
            if msg is not None:
                return msg
    return None


def _indexes_with(module, fdef, param: str, depth: int = 0) -> bool:
    """The function (or a module-level function it passes the list to) indexes a tensor with the
    list: `x[:, cols]`, `mask[cols] = 1.0` (used in arithmetic or given to `torch.tensor()`, a
    list of ints is made dynamic after one recompile instead: measured, 3 graphs)."""
    if fdef is None or depth > 2:
        return False
    defs = {n.name.value: n for n in module.body if type(n) is cst.FunctionDef} if module is not None else {}
    for n in _walk(fdef.body):
        if type(n) is cst.Subscript and any(_names(el.slice, param) for el in n.slice):
            return True
        if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value in defs:
            callee = defs[n.func.value]
            names = [p.name.value for p in callee.params.params]
            for i, arg in enumerate(x for x in n.args if x.keyword is None and not x.star):
                if type(arg.value) is cst.Name and arg.value.value == param and i < len(names) \
                        and _indexes_with(module, callee, names[i], depth + 1):
                    return True
    return False


def _names(node, name: str) -> bool:
    """`name` itself, or an element of a tuple index (`x[:, cols]`)."""
    if type(node) is cst.Index:
        node = node.value
    return type(node) is cst.Name and node.value == name


def _drawn(expr) -> Optional[cst.Call]:
    """The random draw a list-of-ints expression is: `random.sample(...)`, `sorted(random.sample(...))`,
    `torch.randperm(n)[:k].tolist()`."""
    if type(expr) is not cst.Call:
        return None
    func = expr.func
    if type(func) is cst.Name and func.value in WRAPPERS and len(expr.args) == 1:
        return _drawn(expr.args[0].value)
    text = code(func)
    if text in RANDOM_LISTS:
        return expr
    if type(func) is cst.Attribute and func.attr.value == "tolist" and not expr.args:
        stack = [func.value]
        while stack:
            n = stack.pop()
            if type(n) is cst.Call and code(n.func).rsplit(".", 1)[-1] in TORCH_DRAWS \
                    and code(n.func).startswith(("torch.", "np.random.", "numpy.random.")):
                return expr
            stack += child_nodes(n)
    return None


def _grown_attribute(loop, expr: cst.Attribute, name: str, limit: int) -> Optional[str]:
    """`self.history` appended to in the loop (and maybe cut to its last k items there)."""
    text = code(expr)
    how, cut = None, None
    for lp in loop.chain():
        for n in _walk(lp.node.body):
            if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in ("append", "extend") \
                    and code(n.func.value) == text:
                how = how or n.func.attr.value
            elif type(n) is cst.Assign and len(n.targets) == 1 and code(n.targets[0].target) == text:
                cut = _window(n.value, text)
                if cut is None:
                    return None  # re-bound each pass: not growing
    if how is None:
        return None
    if cut is not None:
        return WINDOW.format(arg=text, how=how, cut=cut, name=name)
    return GROWS.format(arg=text, how=how, name=name, limit=limit)


def _window(value, text: str) -> Optional[str]:
    """`x[-k:]` of the same list: its text, else None."""
    if type(value) is cst.Subscript and code(value.value) == text and len(value.slice) == 1 \
            and type(value.slice[0].slice) is cst.Slice and value.slice[0].slice.upper is None \
            and value.slice[0].slice.lower is not None:
        return code(value)
    return None


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        yield n
        stack += child_nodes(n)
