"""Python values Dynamo keeps static whatever automatic dynamic does, for HPU016 and HPU017.

An int or float argument is made dynamic after one recompile (automatic dynamic), but not where
the value itself decides what is traced. Measured on torch 2.13 (CPU, ``eager`` backend; the
tables in docs/compile-target.md), each of these is a guard on the value and a graph per value:

- an int that bounds a `for` over ``range(n)`` in the compiled function: Dynamo unrolls the loop
  (``for _ in range(n)`` fed 3, 5, 4, 6: 4 graphs; ``x[:n] * n`` fed the same: 2);
- a float given to an argument torch needs as a number: ``F.interpolate``/``F.upsample``
  ``scale_factor``, the ``p`` of ``F.dropout``/``dropout2d``/``alpha_dropout`` (and of an
  ``nn.Dropout``, ``self.drop.p``), ``F.pad(value=)``, ``F.cross_entropy(label_smoothing=)``,
  ``F.layer_norm(eps=)``, ``F.smooth_l1_loss(beta=)``, ``F.huber_loss(delta=)`` (4 values: 4
  graphs); ``x * s``, ``clamp``, ``pow``, ``leaky_relu``, ``elu``, ``softplus``, ``hardtanh``,
  ``normalize(eps=)`` and ``torch.full`` make the float dynamic after one recompile;
- a list of strings whose items the function reads (``self.adapters[name] for name in names``):
  each item is guarded by value (``names[0] == 'sql'``), a graph per list; ``len(names)`` alone
  is guarded on the length only;
- ``next()`` of an ``itertools.count`` (module-level or ``self.<attr>``) inside the compiled
  function: a guard on the counter's position, so every call recompiles.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import argument, bound_arguments, child_nodes, code
from hpulint.rules.compile_forms import module_callees
from hpulint.rules.compiled_region import MANY, counter_values, int_of_counters, names_in

FUNCTIONAL = ("F", "functional", "nn.functional", "torch.nn.functional")
# leaf name -> (position, keyword) of the float argument torch keeps static (measured on 2.13)
FLOAT_ARGS = {"interpolate": (2, "scale_factor"), "upsample": (2, "scale_factor"), "dropout": (1, "p"),
              "dropout2d": (1, "p"), "alpha_dropout": (1, "p"), "pad": (3, "value"),
              "cross_entropy": (None, "label_smoothing"), "layer_norm": (4, "eps"),
              "smooth_l1_loss": (None, "beta"), "huber_loss": (None, "delta")}
# leaf name -> the (position, keyword) of int arguments torch needs as numbers to build the graph:
# never made dynamic (measured on 2.13: a compiled function fed 2, 3, 4, 5 compiled 4 graphs; the
# same int given to `arange`, `randperm`, `eye`, `zeros`, `full`, `topk`, `roll`, `narrow`,
# `repeat_interleave`, `multinomial` or `tril(k)` compiled 2, automatic dynamic)
INT_ARGS = {"one_hot": ((1, "num_classes"),), "triu_indices": ((0, "row"), (1, "col")),
            "tril_indices": ((0, "row"), (1, "col")), "linspace": ((2, "steps"),), "logspace": ((2, "steps"),),
            "pixel_shuffle": ((1, "upscale_factor"),), "pixel_unshuffle": ((1, "downscale_factor"),),
            "unfold": ((1, "kernel_size"),), "hann_window": ((0, "window_length"),), "diagonal": ((1, "offset"),)}
INT_NAMESPACES = ("torch",) + FUNCTIONAL
DROPOUTS = frozenset({"Dropout", "Dropout2d", "AlphaDropout"})
ITERATORS = frozenset({"zip", "enumerate", "reversed", "list", "tuple"})

WHY = {
    "range": ("bounds a Python loop in it (`range({arg})`)", "the int a Python loop runs to (it unrolls "
              "the loop, so the int is never made dynamic)",
              "Loop over a fixed maximum and mask (or stop on a tensor flag), or keep the loop in the eager "
              "code around a compiled step"),
    "float": ("is given to `{said}`", "a float that `{said}` takes as a number (never made dynamic, unlike "
              "a float used in tensor arithmetic)",
              "Keep it fixed (one value, or a few buckets compiled once each), or do that step with tensor "
              "arithmetic on a float tensor"),
    "int": ("is given to `{said}`", "an int that `{said}` needs as a number to build the graph (never made "
            "dynamic, unlike an int used as a size or in tensor arithmetic)",
            "Keep it fixed (one value, or a few buckets compiled once each: pad the classes, points or window to "
            "the largest), or build that tensor in the eager code and pass it in"),
    "index": ("indexes the Python list `{said}` in it", "the int that indexes a Python list (the item is picked "
              "while tracing, so the int is never made dynamic)",
              "Make the table a tensor (`torch.tensor(values)`) and index that (the int is then made dynamic "
              "after one recompile), or pass the values themselves as tensors"),
    "items": ("is a list of strings whose items it reads", "each string of the list by value (strings are "
              "never made dynamic)",
              "Pass indices as a tensor (and gather from stacked weights), or group the rows by name in the "
              "eager code and call the compiled function once per name"),
}
SPECIALIZED = (
    "`{arg}` {what}, and changes from one call of the compiled `{name}` to the next ({how}): Dynamo guards "
    "on {guard}, so it compiles the function once per value, {values}. {fix}"
)
COUNT_NEXT = (
    "`next({it})` on an `itertools.count` inside the compiled `{fn}`: Dynamo guards on the counter's "
    "position, so every call recompiles, and after `recompile_limit` ({limit}) it runs the function "
    "eagerly for the rest of the run (eager fallback). Take the id with `next()` in the eager code "
    "around the compiled call (and tag the result there)"
)


def specialized_uses(fn: cst.FunctionDef, targets: set, lists: frozenset = frozenset(),
                     callees: Optional[dict] = None, depth: int = 2) -> dict:
    """{name: (kind, what is said)} for the names among ``targets`` (parameters, or ``self.<attr>``
    texts) that the function's body uses where Dynamo keeps the value static; ``lists`` are the
    texts of module-level Python lists (`TABLE`, `sched.sigmas`). ``callees`` (name -> (FunctionDef,
    parameters not passed), from ``module_callees``) lets it follow a target passed on to a function
    or module of the file (`model(x, scale)` whose `forward` gives `scale` to `F.pixel_shuffle`),
    ``depth`` calls deep: Dynamo inlines them, so the guard is the same."""
    out: dict = {}
    if callees and depth > 0:
        for n in _walk(fn.body):
            if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value in callees \
                    and n.func.value != fn.name.value:
                inner, skip = callees[n.func.value]
                pairs = bound_arguments(n, [p.name.value for p in inner.params.params][skip:]) or ()
                passed = {p: code(v) for p, v in pairs if p is not None and code(v) in targets}
                deeper = specialized_uses(inner, set(passed), lists, callees, depth - 1) if passed else {}
                for p, (kind, said) in deeper.items():
                    if kind in ("float", "int", "range"):
                        out.setdefault(passed[p], (kind, said))
    for n in _walk(fn.body):
        if type(n) is cst.Subscript and code(n.value) in lists and len(n.slice) == 1 \
                and type(n.slice[0].slice) is cst.Index:
            for name in _names(n.slice[0].slice.value, targets):
                out.setdefault(name, ("index", code(n.value)))
        if type(n) in (cst.For, cst.CompFor):
            it = n.iter
            if _is_call(it, "range"):
                for a in it.args:
                    for name in _names(a.value, targets):
                        out.setdefault(name, ("range", ""))
            for name in _iterated(it, targets):
                out.setdefault(name, ("items", ""))
        elif type(n) is cst.Subscript and code(n.value) in targets:
            out.setdefault(code(n.value), ("items", ""))
        elif type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in FLOAT_ARGS \
                and code(n.func.value) in FUNCTIONAL:
            pos, kw = FLOAT_ARGS[n.func.attr.value]
            arg = argument(n, pos, kw)
            if arg is not None and code(arg) in targets:
                said = f"{code(n.func)}({kw}=...)"
                out.setdefault(code(arg), ("float", said))
        elif type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in INT_ARGS \
                and code(n.func.value) in INT_NAMESPACES:
            for pos, kw in INT_ARGS[n.func.attr.value]:
                arg = argument(n, pos, kw)
                if arg is not None and code(arg) in targets:
                    out.setdefault(code(arg), ("int", f"{code(n.func)}({kw}=...)"))
    return out


def dropout_attrs(cls: cst.ClassDef) -> set:
    """``self.<attr>`` names a class's ``__init__`` binds to an ``nn.Dropout`` (or 2d, alpha)."""
    out = set()
    for n in _walk(cls.body):
        if type(n) is cst.Assign and type(n.value) is cst.Call and code(n.value.func).rsplit(".", 1)[-1] in DROPOUTS:
            for t in n.targets:
                if type(t.target) is cst.Attribute and code(t.target.value) == "self":
                    out.add(t.target.attr.value)
    return out


def argument_values(rule, expr: cst.BaseExpression, loop, counters: dict, kind: str, literals: dict):
    """(number of values or None for more than the limit, how, up to) for an argument of a call in
    ``loop`` that takes different values from one pass to the next, of the kind the use needs."""
    name = expr.value if type(expr) is cst.Name else None
    if name is not None:
        for lp in loop.chain():
            node = lp.node
            if type(node) is cst.For and type(node.target) is cst.Name and node.target.value == name:
                n = _distinct(_literal(node.iter, literals), kind)
                if n is not None:
                    return n, f"`for {name} in {_short(node.iter)}`", False
    if type(expr) is cst.Subscript and type(expr.value) is cst.Name and len(expr.slice) == 1 \
            and type(expr.slice[0].slice) is cst.Index and type(expr.slice[0].slice.value) is cst.SimpleString:
        key = expr.slice[0].slice.value.value
        for lp in loop.chain():
            node = lp.node
            if type(node) is cst.For and type(node.target) is cst.Name and node.target.value == expr.value.value:
                dicts = _literal(node.iter, literals)
                values = [_entry(d, key) for d in dicts.elements] if dicts is not None else []
                if values and all(v is not None for v in values):
                    n = _distinct(cst.List([cst.Element(v) for v in values]), kind)
                    if n is not None:
                        return n, f"`{code(expr)}` of each item of `{_short(node.iter)}`", False
    keyed = type(expr) is cst.Subscript and type(expr.value) is cst.Name and len(expr.slice) == 1 \
        and type(expr.slice[0].slice) is cst.Index
    table = getattr(rule, "dicts", {}).get(expr.value.value) if keyed else None
    if type(table) is cst.Dict and kind in ("range", "index", "int") \
            and rule.counters_of(expr.slice[0].slice.value, loop, counters):
        # `SIZES[name]` with `name = list(SIZES)[step % 3]`: the table's values, a pass each
        n = _distinct(cst.List([cst.Element(el.value) for el in table.elements if type(el) is cst.DictElement]), kind)
        if n is not None:
            return n, f"`{code(expr)}`, a value of the dict `{expr.value.value}` picked by the loop", True
    value = rule.value_in_loop(name, loop) if name is not None else None
    if type(value) is cst.Call and code(value.func) in ("random.choice", "choice") and value.args:
        n = _distinct(_literal(value.args[0].value, literals), kind)
        if n is not None:
            return n, f"`{name} = {code(value)}`", True
    picked = value if value is not None else expr  # `(5, 7, 9)[step % 3]` passed as it is
    if type(picked) is cst.Subscript and set(names_in(picked)) & set(counters):
        n = _distinct(_literal(picked.value, literals), kind)
        if n is not None:
            return n, f"`{name} = {code(value)}`" if value is not None else f"`{code(expr)}`", True
    if kind == "items":
        return None
    made = expr if value is None else value
    used = rule.counters_of(made, loop, counters)
    if not used or (kind in ("range", "index", "int") and not int_of_counters(made, counters)):
        return None
    n = _modulo(made, counter_values(counters, used))
    if n is None and not rule.unbounded(used, counters):
        return None
    if n is not None and n < MANY:
        return None
    loops = [counters[u] for u in sorted(used) if not isinstance(counters[u], str)]
    how = ", ".join(f"`for {code(lp.node.target)} in {_short(lp.node.iter)}`" if type(lp.node) is cst.For
                    else "a `while` loop" for lp in loops)
    how = (f"`{code(expr)}`" + (f" = `{code(value)}`" if value is not None else "") + ", " + how) \
        if code(expr) not in used else how
    return n, how, kind == "float"


def python_lists(module: cst.Module) -> frozenset:
    """Texts of the Python lists made at module level: `TABLE = [...]` (a literal, a comprehension,
    `list(...)`, a sum of those) and `obj.attr` where `obj = Cls(...)` and `Cls.__init__` sets
    `self.attr` to one (`sched.sigmas`)."""
    out, attrs = set(), {}
    for st in module.body:
        if type(st) is cst.ClassDef:
            init = next((s for s in st.body.body if type(s) is cst.FunctionDef and s.name.value == "__init__"), None)
            for n in _walk(init.body) if init is not None else ():
                if type(n) is cst.Assign and _list_form(n.value):
                    attrs.setdefault(st.name.value, set()).update(
                        t.target.attr.value for t in n.targets
                        if type(t.target) is cst.Attribute and code(t.target.value) == "self")
    for st in module.body:
        if type(st) is not cst.SimpleStatementLine:
            continue
        for small in st.body:
            if type(small) is not cst.Assign:
                continue
            for t in small.targets:
                if type(t.target) is not cst.Name:
                    continue
                if _list_form(small.value):
                    out.add(t.target.value)
                elif type(small.value) is cst.Call and type(small.value.func) is cst.Name:
                    out |= {f"{t.target.value}.{a}" for a in attrs.get(small.value.func.value, ())}
    return frozenset(out)


def _list_form(value) -> bool:
    if type(value) is cst.BinaryOperation and type(value.operator) is cst.Add:
        return _list_form(value.left) or _list_form(value.right)
    return type(value) in (cst.List, cst.ListComp) or _is_call(value, "list")


def specialized_call(rule, call: cst.Call, callee: str, loop, counters: dict, fn, skip: int,
                     literals: dict) -> Optional[str]:
    """The message for a call in a loop of the compiled ``callee`` (running ``fn``, whose first
    ``skip`` parameters are not passed) with an argument the function keeps static and the loop
    changes, or None."""
    params = [p.name.value for p in fn.params.params][skip:]
    if getattr(rule, "_callees", None) is None:
        rule._callees = module_callees(rule.module)
    uses = specialized_uses(fn, set(params), python_lists(rule.module), rule._callees)
    if not uses:
        return None
    for param, value in bound_arguments(call, params) or ():
        if param not in uses:
            continue
        kind, said = uses[param]
        hit = argument_values(rule, value, loop, counters, kind, literals)
        if hit is not None:
            n, how, upto = hit
            return message(param, kind, said, callee, how, n, rule.limit, upto)
    return None


def count_next(fn, node: cst.Call, counts: set) -> Optional[str]:
    """The iterator text of `next(it)` where ``it`` is a module-level name or a ``self.<attr>``
    bound to an ``itertools.count``, or None. ``counts`` has the names and ``Class.attr`` keys."""
    if not _is_call(node, "next") or len(node.args) != 1:
        return None
    it = node.args[0].value
    if type(it) is cst.Name and it.value in counts and it.value not in fn.bindings:
        return it.value
    if type(it) is cst.Attribute and code(it.value) == "self" and fn.cls is not None \
            and f"{fn.cls.name}.{it.attr.value}" in counts:
        return code(it)
    return None


def values_text(n: Optional[int], limit: int, upto: bool) -> str:
    if n is None or n - 1 >= limit:
        said = (f"up to {n} values" if upto else f"{n} values") if n else "a new value each pass"
        return (f"{said}: a recompile for each new "
                f"one until `recompile_limit` ({limit}), then Dynamo runs it eagerly for the rest of the run "
                "(eager fallback)")
    if upto:
        return f"up to {n} values: up to {n} graphs, up to {n - 1} recompiles (each a full compile)"
    return f"{n} values: {n} graphs, {n - 1} recompiles (each a full compile)"


def message(arg: str, kind: str, said: str, name: str, how: str, n, limit: int, upto: bool) -> str:
    what, guard, fix = WHY[kind]
    return SPECIALIZED.format(arg=arg, what=what.format(arg=arg, said=said), name=name, how=how,
                              guard=guard.format(said=said), values=values_text(n, limit, upto), fix=fix)


# --- helpers --------------------------------------------------------------------------------------

def _walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda) and n is not node:
            if type(n) is cst.FunctionDef:
                stack += list(child_nodes(n.body))
            continue
        yield n
        stack += list(child_nodes(n))


def _modulo(expr, n: Optional[int]) -> Optional[int]:
    """At most K values for `i % K` (K a literal), else ``n``."""
    for m in _walk(expr):
        if type(m) is cst.BinaryOperation and type(m.operator) is cst.Modulo and type(m.right) is cst.Integer:
            k = int(m.right.value)
            n = k if n is None or k < n else n
    return n


def _short(node) -> str:
    text = code(node)
    if "\n" in text or len(text) > 40:
        return f"[... {len(node.elements)} items]" if type(node) in (cst.List, cst.Tuple) else "..."
    return text


def _is_call(node, name: str) -> bool:
    return type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == name


def _names(expr: cst.BaseExpression, targets: set) -> set:
    if code(expr) in targets:
        return {code(expr)}
    if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.Add, cst.Subtract):
        return _names(expr.left, targets) | _names(expr.right, targets)
    return set()


def _iterated(it: cst.BaseExpression, targets: set) -> set:
    if code(it) in targets:
        return {code(it)}
    if type(it) is cst.Call and type(it.func) is cst.Name and it.func.value in ITERATORS:
        return {code(a.value) for a in it.args if code(a.value) in targets}
    return set()


def _literal(node, literals: dict):
    if type(node) is cst.Name:
        node = literals.get(node.value)
    return node if type(node) in (cst.List, cst.Tuple) and node.elements else None  # (not a dict)


def _entry(d, key: str):
    if type(d.value) is not cst.Dict:
        return None
    for el in d.value.elements:
        if type(el) is cst.DictElement and type(el.key) is cst.SimpleString and el.key.value == key:
            return el.value
    return None


def _number(v) -> bool:
    if type(v) is cst.UnaryOperation and type(v.operator) is cst.Minus:
        v = v.expression
    return type(v) in (cst.Integer, cst.Float)


def _distinct(lit, kind: str) -> Optional[int]:
    """How many different values of the kind a literal list has (at least MANY), else None."""
    if lit is None or any(type(el) is cst.StarredElement for el in lit.elements):
        return None
    values = [el.value for el in lit.elements]
    if kind == "items":
        ok = all(type(v) in (cst.List, cst.Tuple) and v.elements
                 and all(type(e.value) is cst.SimpleString for e in v.elements) for v in values)
        n = len({tuple(e.value.value for e in v.elements) for v in values}) if ok else 0
    elif kind in ("range", "index", "int"):
        n = len({code(v) for v in values}) if all(type(v) is cst.Integer for v in values) else 0
    else:
        n = len({float(code(v).replace("_", "")) for v in values}) if all(_number(v) for v in values) else 0
    return n if n >= MANY else None


# --- HPU016: a float attribute of a compiled module set between calls -----------------------------

FLOAT_SET = (
    "The compiled `{compiled}` runs {cls}.forward(), and `{target} = {value}` in the loop sets {what} to a "
    "float that changes between its calls ({how}): Dynamo guards on it by value ({why}; a float attribute "
    "used only in tensor arithmetic is made dynamic, this one is not), so {values}. {fix}"
)
DROPOUT_WHY = "`F.dropout` takes the rate as a number"
FIX_DROPOUT = ("Keep the rate fixed per phase (a few values, compiled once each), or keep it in a float tensor "
               "buffer updated in place and apply the dropout with it (`x * (torch.rand_like(x) >= rate) / "
               "(1 - rate)`)")
FIX_FLOAT_ATTR = ("Keep the value fixed (or a few values, compiled once each), or keep it in a float tensor "
                  "buffer updated in place and use it in tensor arithmetic")


def float_set(node: cst.Assign, an) -> Optional[tuple]:
    """(target, instance expression or None, guarded by isinstance Dropout) for `x.<attr> = value`
    in a loop, where value reads a loop counter; recorded while walking."""
    if an.loop is None or len(node.targets) != 1 or type(node.targets[0].target) is not cst.Attribute:
        return None
    tgt = node.targets[0].target
    if code(tgt.value) == "self":
        return None
    dropout = False
    if type(tgt.value) is cst.Name and tgt.attr.value == "p":
        for b in an.if_branches:
            test = b.node.test
            if b.in_body and type(test) is cst.Call and _is_call(test, "isinstance") and len(test.args) == 2 \
                    and code(test.args[0].value) == tgt.value.value \
                    and code(test.args[1].value).rsplit(".", 1)[-1] in DROPOUTS:
                dropout = True
    return tgt, dropout


def float_set_findings(rule, sets: list, classes: dict) -> list:
    """(call node, message) for each float attribute set in a loop around calls of the compiled
    module that reads it where Dynamo keeps it static: the `p` of an `nn.Dropout` of the module
    (`for m in model.modules(): if isinstance(m, nn.Dropout): m.p = f(epoch)`, `model.drop.p = ...`),
    or `self.<attr>` given to a function that takes it as a number (`F.dropout(x, self.rate)`)."""
    out, done = [], set()
    for node, tgt, dropout, loop, counters in sets:
        inst, what, why, fix = None, None, None, None
        owner = tgt.value
        if dropout:  # `m.p` where `for m in <inst>.modules()` and isinstance(m, nn.Dropout)
            for lp in loop.chain():
                n = lp.node
                if type(n) is cst.For and code(n.target) == code(owner) and type(n.iter) is cst.Call \
                        and type(n.iter.func) is cst.Attribute and n.iter.func.attr.value in ("modules", "children") \
                        and type(n.iter.func.value) is cst.Name:
                    inst = n.iter.func.value.value
            what, why, fix = f"the `p` of each `nn.Dropout` in `{inst}`", DROPOUT_WHY, FIX_DROPOUT
        elif tgt.attr.value == "p" and type(owner) is cst.Attribute and type(owner.value) is cst.Name:
            inst = owner.value.value  # `model.drop.p = ...`
            cls = _class_of(rule, inst, classes)
            if cls is None or owner.attr.value not in dropout_attrs(classes[cls]):
                continue
            what, why, fix = f"the `p` of the `nn.Dropout` `{code(owner)}`", DROPOUT_WHY, FIX_DROPOUT
        elif type(owner) is cst.Name:
            inst = owner.value  # `model.rate = ...` read by forward as `F.dropout(x, self.rate)`
            cls = _class_of(rule, inst, classes)
            fwd = _forward(classes[cls]) if cls is not None else None
            uses = specialized_uses(fwd, {f"self.{tgt.attr.value}"}) if fwd is not None else {}
            kind, said = uses.get(f"self.{tgt.attr.value}", (None, ""))
            if kind != "float":
                continue
            what, why, fix = f"`self.{tgt.attr.value}`", f"`{said}` takes it as a number", FIX_FLOAT_ATTR
        cls = _class_of(rule, inst, classes) if inst is not None else None
        if cls is None:
            continue
        used = {u for u in names_in(node.value) if u in counters and not isinstance(counters[u], str)
                and u != code(owner)}
        loops = {id(counters[u]) for u in used}
        calls = [(callee, call) for callee, where, call in rule.loop_calls
                 if rule.compiled_of.get(callee) == inst and any(id(lp) in loops for lp in where.chain())]
        if not calls or id(calls[0][1]) in done:
            continue
        n = counter_values(counters, used)
        if n is not None and n < MANY:
            continue
        upto = type(node.value) is not cst.BinaryOperation
        how = ", ".join(f"`{code(counters[u].node.target)}` in `{code(counters[u].node.iter)}`"
                        if type(counters[u].node) is cst.For else "a `while` loop" for u in sorted(used))
        done.add(id(calls[0][1]))
        out.append((calls[0][1], FLOAT_SET.format(
            compiled=calls[0][0], cls=cls, target=code(tgt), value=code(node.value), what=what, how=how, why=why,
            values=values_text(n, rule.limit, upto), fix=fix)))
    return out


def _class_of(rule, inst: str, classes: dict) -> Optional[str]:
    return next((c for c in sorted(rule.built.get(inst, ())) if c in classes and _forward(classes[c]) is not None),
                None)


def _forward(cls: cst.ClassDef):
    return next((s for s in cls.body.body if type(s) is cst.FunctionDef and s.name.value == "forward"), None)
