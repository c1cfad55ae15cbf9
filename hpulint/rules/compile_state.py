"""State Dynamo guards on that code changes from one call to the next, for HPU016.

Measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md):

- **an int attribute bumped inside the compiled region** (``self.seen += 1`` in ``forward`` or a
  method it calls, also a method of a plain object a compiled function calls): Dynamo reads the
  attribute as a constant and guards on its value (``self.seen == 0``), and the statement changes
  it on every call: every call recompiles until ``recompile_limit`` (8), then the frame runs
  eagerly, with the ``eager`` and the ``inductor`` backend alike. A tensor buffer bumped the same
  way (``self.steps += 1``) is in the graph: no recompile (a plain object's tensor too); an
  attribute set in ``__init__`` and only read: no recompile. For an nn.Module,
  ``torch._dynamo.config.allow_unspec_int_on_nn_module = True`` makes the int dynamic after one
  recompile (not for a plain object's attribute: still a recompile every call). Not reported: a float attribute bumped the same way (one recompile,
  then dynamic, under the ``eager`` backend the verifier uses; a recompile every call under
  ``inductor``: the backend decides, so hpulint does not claim either).
- **an int attribute bumped by a forward hook** (``module.calls += 1`` in a function given to
  ``register_forward_pre_hook``/``register_forward_hook`` in the ``__init__`` of a module whose
  ``forward`` is compiled): Dynamo runs module hooks inside the compiled ``forward`` and guards
  on the value (``self._modules['adapter'].calls == 3``), so every call recompiles: 8 graphs and
  an eager fallback over 12 calls, whether or not ``forward`` reads it. A tensor buffer bumped by
  the hook: 1 graph.
- **``requires_grad`` changed between calls, on a part picked by a loop counter** (gradual
  unfreezing: ``encoder[k - epoch].requires_grad_(True)``): Dynamo guards on every parameter's
  ``requires_grad`` ("requires_grad mismatch"), so each new set of trainable parameters is a new
  graph: one recompile per stage, an eager fallback after 8. Set once before compiling, or
  toggled between two states (a GAN's ``requires_grad_(False)``/``(True)`` each step): one
  recompile at most, both graphs cached.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import bound_arguments, descendants
from hpulint.rules.compiled_region import MANY, code_of, counter_values, names_in, recompiles_text

BUMP = (
    "`{stmt}` {where}: Dynamo treats an int attribute as a constant of the graph and guards "
    "on its value (`{attr} == <value>`), and this changes it on every call, so every call recompiles, "
    "and after `recompile_limit` ({limit}) Dynamo runs the function eagerly for the rest of the run "
    "(eager fallback). {keep}, or count in the eager loop and pass the value in"
)
MODULE_KEEP = ("Keep the count in a tensor buffer (`self.register_buffer(\"{name}\", torch.zeros((), "
               "dtype=torch.long))`: updated in the graph), set "
               "`torch._dynamo.config.allow_unspec_int_on_nn_module = True` (an nn.Module's int attributes "
               "are then made dynamic after one recompile)")
OBJECT_KEEP = ("Keep the count in a tensor (`self.{name} = torch.zeros((), dtype=torch.long)`, bumped in "
               "place: updated in the graph)")
MODE = (
    "`{stmt}` in the loop{how} changes which modules of the compiled `{compiled}` are in training mode "
    "from one pass of the loop to the next (`{counters}`): Dynamo guards on every module's `training` "
    "flag, so each new set of modules in `eval()` mode is a new graph: {values}. Freeze in a few stages "
    "(each stage one recompile), or switch the modules once before compiling"
)
UNFREEZE = (
    "`{stmt}` in the loop{how} changes which parameters of the compiled `{compiled}` require grad "
    "from one pass of the loop to the next (`{counters}`): Dynamo guards on every parameter's "
    "`requires_grad` (\"requires_grad mismatch\"), so each new set is a new graph: {values}. "
    "Unfreeze in a few stages (each stage one recompile), and raise "
    "`torch._dynamo.config.recompile_limit` above their number when there are more than {limit}"
)


def bumped_attribute(node) -> Optional[cst.Attribute]:
    """The attribute a statement changes from its own value: `x.n += k`, `x.n = x.n + k`."""
    if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Attribute):
        return node.target
    if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Attribute) \
            and isinstance(node.value, cst.BinaryOperation):
        target = node.targets[0].target
        text = code_of(target)
        if any(isinstance(n, cst.Attribute) and code_of(n) == text for n in _operands(node.value)):
            return target
    return None


def is_self_attr(node) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def literal_kind(node) -> str:
    """"int" for an int literal (`0`, `-1`), "float" for a float one, else "other"."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    if isinstance(node, cst.Integer):
        return "int"
    return "float" if isinstance(node, cst.Float) else "other"


def int_step(node) -> bool:
    """The statement adds or takes an int literal (`+= 1`, `self.n = self.n - 2`)."""
    if isinstance(node, cst.AugAssign):
        return isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)) and literal_kind(node.value) == "int"
    if isinstance(node, cst.Assign) and isinstance(node.value, cst.BinaryOperation) \
            and isinstance(node.value.operator, (cst.Add, cst.Subtract)):
        return any(literal_kind(n) == "int" for n in _operands(node.value))
    return False


# calls that need a Python number: an int they are given is specialized (guarded by value)
_NUMBER_CALLS = frozenset({"min", "max", "int", "float", "round", "range", "abs", "pow"})


def read_as_number(cls_node: cst.ClassDef, attr: str) -> bool:
    """A method of the class passes `self.<attr>` (alone or in arithmetic) to a call that takes a
    Python number (`min(1.0, self.n / 100)`, `math.exp(-self.updates / tau)`), to a callable the
    object holds (`self.decay(self.updates)`), or tests it (`if self.n > k:`): Dynamo then guards on
    its value. Measured on 2.13 for a plain object's counter bumped in the region: `min(...)` or a
    lambda with `math.exp`, a recompile each call; `0.5 ** self.n` into tensor ops, one recompile
    (the int is made dynamic)."""
    for n in descendants(cls_node):
        if type(n) is cst.Call:
            func = n.func
            name = func.value if type(func) is cst.Name else None
            held = type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self"
            mathy = type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "math"
            if (name in _NUMBER_CALLS or held or mathy) and any(_reads(a.value, attr) for a in n.args):
                return True
        elif type(n) in (cst.If, cst.While) and _reads(n.test, attr):
            return True
    return False


def _reads(expr, attr: str) -> bool:
    return any(type(x) is cst.Attribute and x.attr.value == attr and type(x.value) is cst.Name
               and x.value.value == "self" for x in descendants(expr))


def bump_message(node, target: cst.Attribute, limit: int, where: str, module: bool) -> str:
    """The message for `self.<attr> += k` in a compiled region; ``module``: the object is an
    nn.Module (the config flag covers modules only: measured, a plain object still recompiles)."""
    stmt = code_of(node).strip().splitlines()[0]
    name = target.attr.value
    return BUMP.format(stmt=stmt, where=where, attr=code_of(target), limit=limit,
                       keep=(MODULE_KEEP if module else OBJECT_KEEP).format(name=name))


def _operands(node: cst.BaseExpression) -> list:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.BinaryOperation):
            stack += (n.left, n.right)
        else:
            out.append(n)
    return out


# --- forward hooks -----------------------------------------------------------------------------

HOOKS = {"register_forward_pre_hook": "forward pre-hook", "register_forward_hook": "forward hook"}


def registered_hook(call: cst.Call) -> Optional[tuple]:
    """(hook function name, kind) for `x.register_forward_pre_hook(f)` / `(self.f)`."""
    if not isinstance(call.func, cst.Attribute) or call.func.attr.value not in HOOKS or not call.args:
        return None
    f = call.args[0].value
    if isinstance(f, cst.Name):
        return f.value, HOOKS[call.func.attr.value]
    if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self":
        return f.attr.value, HOOKS[call.func.attr.value]
    return None


def hook_bumps(an, hooks: list, defs: dict, int_attrs: set, limit: int) -> list:
    """(statement, attribute, deferred message) for `module.n += 1` (or `self.n += 1` in a bound
    method) in a forward hook registered in a method of a class whose compiled forward runs it."""
    out = []
    for name, kind, cls in hooks:
        fn = defs.get(name)
        if fn is None:
            continue
        params = [p.name.value for p in fn.params.params]
        owners = {params[0], "self"} if params else {"self"}
        for stmt in _walk_statements(fn):
            target = bumped_attribute(stmt)
            if target is None or not int_step(stmt) or not isinstance(target.value, cst.Name) \
                    or target.value.value not in owners or target.attr.value not in int_attrs:
                continue

            def when(stmt=stmt, target=target, name=name, kind=kind, cls=cls):
                fwd = next((s for s in an.all_functions if s.name == "forward" and s.cls is not None
                            and s.cls.name == cls and an.compiled_why(s)), None)
                if fwd is None:
                    return None
                where = f"in {name}(), a {kind} registered by {cls}, whose compiled forward() runs it (Dynamo traces module hooks)"
                return bump_message(stmt, target, limit, where, True)
            out.append((stmt, target, when))
    return out


def _walk_statements(fn: cst.FunctionDef) -> list:
    out, stack = [], list(fn.body.body)
    while stack:
        n = stack.pop()
        if isinstance(n, cst.SimpleStatementLine):
            out += [s for s in n.body if isinstance(s, (cst.AugAssign, cst.Assign))]
        elif isinstance(n, cst.BaseCompoundStatement) and not isinstance(n, (cst.FunctionDef, cst.ClassDef)):
            stack += list(n.body.body) if hasattr(n.body, "body") else []
    return out


# --- requires_grad changed between calls -----------------------------------------------------

def grad_toggle(node) -> Optional[cst.BaseExpression]:
    """The receiver of `X.requires_grad_(...)`, `X.requires_grad = ...`, `X.eval()` or
    `X.train(...)` (see ``toggle_kind``)."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and (
            node.func.attr.value == "requires_grad_"
            or (node.func.attr.value == "eval" and not node.args) or node.func.attr.value == "train"):
        return node.func.value
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        t = node.targets[0].target
        if isinstance(t, cst.Attribute) and t.attr.value == "requires_grad":
            return t.value
    return None


def receiver_names(recv: cst.BaseExpression, loop, made_of: dict) -> tuple:
    """(names the receiver is picked with, its root names): through the `for` that binds it
    (`for p in block.parameters(): p.requires_grad = True`) and the assignments that made those
    names (`block = encoder[len(encoder) - 1 - epoch]`)."""
    names = set(names_in(recv))
    roots = {_root(recv)}
    for _ in range(3):
        for lp in loop.chain() if loop is not None else ():
            node = getattr(lp, "node", None)
            if isinstance(node, cst.For) and set(names_in(node.target)) & names:
                names |= set(names_in(node.iter))
                roots.add(_root(node.iter))
        for n in list(names):
            names |= made_of.get(n, set())
        roots |= {r2 for r in list(roots) if r in made_of for r2 in made_of[r]}
    return names, roots - {None}


def _root(node) -> Optional[str]:
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node.value if isinstance(node, cst.Name) else None


def toggle_kind(node) -> str:
    """"mode" for `.eval()`/`.train(...)` (the module's `training` flag), else "grad"."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("eval", "train"):
        return "mode"
    return "grad"


def helper_toggle(recv, loop, made_of: dict, params: list) -> Optional[tuple]:
    """(owner parameters, picker parameters) when a toggle in a module-level helper changes a part of
    a module it is given that another of its parameters picks (`for s in model.stages[:upto + 1]:
    ... m.eval()`: owner `model`, picker `upto`), else None."""
    names, roots = receiver_names(recv, loop, made_of)
    owners = [p for p in params if p in roots]
    pickers = [p for p in params if p in names and p not in roots]
    return (owners, pickers) if owners and pickers else None


def helper_call_toggles(calls: list, helpers: dict) -> list:
    """Toggles (as ``unfreeze_findings`` takes them) for calls in loops of helpers that toggle a part
    picked by a parameter, given an argument the loop counter makes (`freeze_bn_upto(model,
    epoch - 1)`): the receiver is the owner's argument, the extra names the picker's."""
    out = []
    for node, callee, loop, counters in calls:
        for params, owners, pickers, kind, first in helpers.get(callee, ()):
            bound = dict((p, v) for p, v in (bound_arguments(node, params) or ()) if p is not None)
            owner = next((bound[p] for p in owners if p in bound), None)
            picked = {n for p in pickers if p in bound for n in names_in(bound[p])}
            if owner is not None and picked & set(counters):
                out.append((node, owner, loop, counters, kind, picked, first))
    return out


def unfreeze_findings(toggles: list, loop_calls: list, compiled_of: dict, made_of: dict, limit: int):
    """(call node, message) for each toggle whose receiver follows a loop counter, in a loop that
    also calls a compiled module the receiver belongs to. A toggle is (node, receiver, loop,
    counters), optionally with its kind ("grad" or "mode"), extra names that pick the part (a
    helper's argument) and the statement to quote."""
    out = []
    for node, recv, loop, counters, *more in toggles:
        kind = more[0] if more else toggle_kind(node)
        names, roots = receiver_names(recv, loop, made_of)
        if len(more) > 1:
            names |= more[1]
        used = sorted(n for n in names if n in counters)
        if not used:
            continue
        # the loop that changes the counter also calls the compiled module (maybe in a nested loop)
        loops = {id(counters[u]) for u in used if not isinstance(counters[u], str)}
        call = None
        for callee, where, c in loop_calls:
            inst = compiled_of.get(callee)
            if inst is not None and any(id(lp) in loops for lp in where.chain()) and roots & _parts(inst, made_of):
                call = (callee, c)
                break
        if call is None:
            continue
        n = counter_values(counters, used)
        if n is not None and n < MANY:
            continue
        values = recompiles_text(n, limit, "sets") if n is not None else (
            "a recompile for each new set until `recompile_limit` "
            f"({limit}), then Dynamo runs it eagerly for the rest of the run (eager fallback)")
        stmt = code_of(more[2] if len(more) > 2 else node).strip().splitlines()[0]
        text = MODE if kind == "mode" else UNFREEZE
        how = f" (through `{code_of(node).strip().splitlines()[0]}`)" if len(more) > 2 else ""
        out.append((call[1], text.format(stmt=stmt, compiled=call[0], counters=", ".join(used),
                                         values=values, limit=limit, how=how), node))
    return out


def _parts(inst: str, made_of: dict) -> set:
    """The instance and every name it was built from, transitively (`model = nn.Sequential(encoder,
    head)`: model, encoder, head and what those were built from)."""
    out, todo = set(), [inst]
    while todo:
        n = todo.pop()
        if n in out:
            continue
        out.add(n)
        todo += list(made_of.get(n, ()))
    return out
