"""What the compile rules (HPU012-HPU017) share: where Dynamo traces, and what it is told.

Every claim the rules make was measured on real Dynamo (torch 2.13, CPU, ``eager`` backend):
docs/compile-target.md has the tables, the fixtures in fixtures/HPU012-HPU017 the counts.
"""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, names_in
from hpulint.analysis.values import DATA, HOST, MASK, TENSOR
from hpulint.rules.base import Rule
from hpulint.rules.compile_reach import reached_kind, reached_why

TENSOR_KINDS = frozenset({TENSOR, MASK, HOST})  # under Dynamo a CPU tensor is traced like any other
COMPILE_CALLS = ("torch.compile",)
RECOMPILE_LIMIT = 8  # torch._dynamo.config.recompile_limit's default

_FLAG = r"(?:torch\._dynamo\.config\.|dynamo_config\.|config\.)?{name}\s*=\s*True"
_SCALARS = re.compile(_FLAG.format(name="capture_scalar_outputs"))
_LIMIT = re.compile(r"\b(?:recompile_limit|cache_size_limit)\s*=\s*(\d+)")
_DYNAMIC_OUT = re.compile(_FLAG.format(name="capture_dynamic_output_shape_ops"))


def compiled_why(an, fn) -> Optional[str]:
    """Why the function runs inside a compiled region (after bind), or None: the link's answer
    (decorated, compiled, called from there), else how Dynamo reaches it otherwise (a property
    read, a module hook, a table of functions, a `functools.partial` of `torch.compile`:
    compile_reach)."""
    if fn is None or fn.kind != "function":
        return None
    return an.compiled_why(fn) or reached_why(an, fn)


IS_COMPILING = frozenset({"torch.compiler.is_compiling", "torch.compiler.is_dynamo_compiling",
                          "torch._dynamo.is_compiling", "torch._utils.is_compiling"})


def not_traced(an) -> bool:
    """The point is in the branch of an `if` Dynamo does not take: the body of
    `if not torch.compiler.is_compiling():` or the else of `if torch.compiler.is_compiling():`
    (is_compiling() is True while Dynamo traces, so the other branch is left out of the graph;
    measured on 2.13: no break for an `.item()` there)."""
    for b in an.if_branches:
        test, positive = b.node.test, True
        while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            test, positive = test.expression, not positive
        if type(test) is cst.Call and not test.args and (an.qualname(test.func) or "") in IS_COMPILING:
            if positive != b.in_body:
                return True
    return False


def where(fn, reason: str) -> str:
    return f"in {fn.name}(), {reason}"


def is_tensor(an, v) -> bool:
    kind = an.kind(v)
    if kind == "unknown":  # a hook's output, a table function's argument (compile_reach)
        kind = reached_kind(an, v)
    return kind in TENSOR_KINDS


def maybe_tensor(an, v) -> bool:
    """Known to be a tensor, or not known to be anything else (`.item()` only tensors have)."""
    return an.kind(v) not in ("scalar", "other", "seq", "none", "size", "model", "optimizer",
                              "loader", "marking-loader", "sym", DATA)


def recompile_limit(source: str) -> int:
    """`torch._dynamo.config.recompile_limit = N` (or the older cache_size_limit) in the file."""
    if "recompile_limit" not in source and "cache_size_limit" not in source:
        return RECOMPILE_LIMIT  # the search below costs a scan with backtracking at every character
    m = _LIMIT.search(source)
    return int(m.group(1)) if m else RECOMPILE_LIMIT


def captures_scalars(source: str) -> bool:
    """`torch._dynamo.config.capture_scalar_outputs = True`: `.item()` stays in the graph."""
    return "capture_scalar_outputs" in source and bool(_SCALARS.search(source))


def captures_dynamic_shapes(source: str) -> bool:
    """`capture_dynamic_output_shape_ops = True`: nonzero & co. stay in the graph."""
    return "capture_dynamic_output_shape_ops" in source and bool(_DYNAMIC_OUT.search(source))


def fullgraph(an, call: cst.Call) -> bool:
    from hpulint.analysis.syntax import is_true, keyword

    return is_true(keyword(call, "fullgraph"))


def is_compile_call(an, node: cst.BaseExpression) -> bool:
    if type(node) is not cst.Call:
        return False
    qn = an.qualname(node.func) or ""
    return qn in COMPILE_CALLS or qn.endswith("torch_xla.compile")


def decorator_call(node: cst.Decorator) -> Optional[cst.Call]:
    return node.decorator if type(node.decorator) is cst.Call else None


# --- calls in loops: what changes from one pass to the next -------------------------------------

SHAPE_FACTORIES = frozenset({"randn", "rand", "zeros", "ones", "empty", "arange", "linspace", "randperm"})
STACKS = frozenset({"stack", "cat", "concat", "vstack", "hstack"})
SHAPE_METHODS = frozenset({"view", "reshape", "expand", "repeat", "narrow", "new_zeros", "new_ones",
                           "new_empty", "new_full", "unflatten"})


class _LoopFacts:
    """What LoopCalls keeps while a file is walked, made once per file and shared by every
    LoopCalls rule on it (each node is filed by the first of them to visit it)."""

    def __init__(self) -> None:
        self.assigned: dict = {}  # id(loop) -> {name: value node}
        self.grown: dict = {}  # id(loop) -> {name: how} (append/extend/+=)
        self.rebound: dict = {}  # id(loop) -> {name}: names re-assigned in the loop
        self.dynamic_marked: set = set()  # (id(loop), name) given to mark_dynamic in the loop
        self.calls: list = []  # (call node, callee code, loop, counters {name: Loop})
        self.fed: dict = {}  # id(loop) -> {name: (callee, index)}: re-bound to a call's output
        self.seen = None  # the last node filed


class LoopCalls(Rule):
    """A base for the recompile rules: while the file is walked, it keeps the calls made in
    loops with what their arguments are made of, the names assigned and appended to in each loop,
    and the mark_dynamic/mark_static calls. Subclasses call ``super().visit_*`` first. The
    LoopCalls rules of a file share what they keep (``_LoopFacts``): a node is filed once."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        facts = ctx.__dict__.get("_loop_facts")
        if facts is None:
            facts = ctx._loop_facts = _LoopFacts()
        self._facts = facts
        self.assigned = facts.assigned
        self.grown = facts.grown
        self.rebound = facts.rebound
        self.dynamic_marked = facts.dynamic_marked
        self.calls = facts.calls
        self.fed = facts.fed
        self.limit = recompile_limit(ctx.source)
        self.module = None

    def _first(self, node) -> bool:
        """Whether ``node`` is not filed yet (and is now being filed)."""
        facts = self._facts
        if facts.seen is node:
            return False
        facts.seen = node
        return True

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def visit_Assign(self, node: cst.Assign) -> None:
        loop = self.an.loop
        if loop is None or not self._first(node):
            return
        from hpulint.rules.compile_feedback import fed_back

        if len(node.targets) == 1:
            fed_back(loop, node.value, node.targets[0].target, self.fed)
        for t in node.targets:
            if type(t.target) is cst.Name:
                self.assigned.setdefault(id(loop), {})[t.target.value] = node.value
                self.rebound.setdefault(id(loop), set()).add(t.target.value)
                if _cut_of(node.value, t.target.value):
                    self.grown.setdefault(id(loop), {})[t.target.value] = f" = {code_of(node.value)}"
            elif type(t.target) is cst.Subscript and type(t.target.value) is cst.Name and len(t.target.slice) == 1 \
                    and any(n in self.counters_here() for el in t.target.slice for n in names_in(el.slice)):
                # a new key every pass: `feats[f"f{i}"] = ...` (one index: `tokens[:, i] = ...` is a tensor's)
                self.grown.setdefault(id(loop), {})[t.target.value.value] = f"[{code_of(t.target.slice[0].slice)}] = ..."
            elif type(t.target) in (cst.Tuple, cst.List) and type(node.value) in (cst.Tuple, cst.List) \
                    and len(t.target.elements) == len(node.value.elements):
                for el, val in zip(t.target.elements, node.value.elements):
                    if type(el.value) is cst.Name:
                        self.assigned.setdefault(id(loop), {})[el.value.value] = val.value
                        self.rebound.setdefault(id(loop), set()).add(el.value.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        loop = self.an.loop
        if loop is not None and type(node.target) is cst.Name and self._first(node):
            self.rebound.setdefault(id(loop), set()).add(node.target.value)
            if type(node.operator) is cst.AddAssign and type(node.value) in (cst.List, cst.Tuple):
                self.grown.setdefault(id(loop), {})[node.target.value] = "+="

    def visit_Call(self, node: cst.Call) -> None:
        an = self.an
        loop = an.loop
        if loop is None or not self._first(node):
            return
        func = node.func
        qn = an.qualname(func) or ""
        if qn.endswith(("mark_dynamic", "maybe_mark_dynamic")) and node.args:
            first = node.args[0].value
            if type(first) is cst.Name:
                for lp in loop.chain():
                    self.dynamic_marked.add((id(lp), first.value))
            return
        if type(func) is cst.Attribute and func.attr.value in ("append", "extend", "insert") \
                and type(func.value) is cst.Name:
            self.grown.setdefault(id(loop), {})[func.value.value] = f".{func.attr.value}()"
            return
        if type(func) is cst.Attribute and func.attr.value == "clear" and type(func.value) is cst.Name:
            self.rebound.setdefault(id(loop), set()).add(func.value.value)  # emptied every pass
            return
        if type(func) in (cst.Name, cst.Attribute):
            self.calls.append((node, code_of(func), loop, self.counters_here()))

    def counters_here(self) -> dict:
        return counters_here(self.an)

    def reset_in(self, name: str, loop) -> bool:
        """``name`` is re-bound or cleared in ``loop`` or a loop around it: it does not keep
        growing from one pass to the next."""
        return any(name in self.rebound.get(id(lp), ()) for lp in loop.chain())

    # --- questions ------------------------------------------------------------------------------

    def value_in_loop(self, name: str, loop):
        """The expression last assigned to ``name`` in ``loop`` or a loop around it."""
        for lp in loop.chain():
            v = self.assigned.get(id(lp), {}).get(name)
            if v is not None:
                return v
        return None

    def shape_counters(self, expr: cst.BaseExpression, loop, counters: dict, depth: int = 0) -> set:
        """Loop counters that set a size of the tensor ``expr`` makes (a factory's size, a
        slice bound, a view's shape), through names assigned in the loop."""
        out: set = set()
        stack = [expr]
        while stack:
            n = stack.pop()
            if type(n) is cst.Call:
                leaf = n.func.attr.value if type(n.func) is cst.Attribute else \
                    n.func.value if type(n.func) is cst.Name else ""
                if leaf in SHAPE_FACTORIES or leaf in SHAPE_METHODS:
                    out |= {c for a in n.args for c in names_in(a.value) if c in counters}
                elif leaf == "randint":
                    sizes = [a for a in n.args if a.keyword is None][2:] + \
                        [a for a in n.args if a.keyword is not None and a.keyword.value == "size"]
                    out |= {c for a in sizes for c in names_in(a.value) if c in counters}
                elif leaf == "full" and n.args:
                    out |= {c for c in names_in(n.args[0].value) if c in counters}
                elif leaf in STACKS and n.args:
                    # `torch.stack([torch.randn(d) for _ in range(n)])`: as many rows as the list has
                    from hpulint.rules.compile_batch_sizes import comprehension_length

                    out |= comprehension_length(n.args[0].value, counters)
                elif leaf == "pad" and len(n.args) >= 2:
                    # padded by an amount made from the same counters: padded to a target size
                    # (`F.pad(x, (0, bucket - n))`), which follows them only as far as the pad does not
                    inner = self.shape_counters(n.args[0].value, loop, counters, depth)
                    out |= inner - self.counters_of(n.args[1].value, loop, counters)
                    continue
                stack += [a.value for a in n.args]
                stack.append(n.func)
            elif type(n) is cst.Subscript:
                for el in n.slice:
                    if type(el.slice) is cst.Slice and not _fixed_width(el.slice, counters):
                        for b in (el.slice.lower, el.slice.upper):
                            if b is not None:
                                out |= {c for c in names_in(b) if c in counters}
                stack.append(n.value)
            elif type(n) is cst.Attribute:
                stack.append(n.value)
            elif type(n) is cst.BinaryOperation:
                stack += (n.left, n.right)
            elif type(n) is cst.Name and depth < 3 and n.value not in counters:
                v = self.value_in_loop(n.value, loop)
                if v is not None:
                    out |= self.shape_counters(v, loop, counters, depth + 1)
        return out

    def counters_of(self, expr: cst.BaseExpression, loop, counters: dict, depth: int = 0) -> set:
        """Loop counters ``expr`` is made of, through names assigned in the loop."""
        out = set()
        for n in names_in(expr):
            if n in counters:
                out.add(n)
            elif depth < 3:
                v = self.value_in_loop(n, loop)
                if v is not None:
                    out |= self.counters_of(v, loop, counters, depth + 1)
        return out

    def unbounded(self, names: set, counters: dict) -> set:
        """The counters among ``names`` whose loop may take more values than the recompile
        limit (a literal list of a few sizes, `range(4)`, cannot storm)."""
        return {n for n in names if not _bounded(counters.get(n), self.limit)}


def counters_here(an) -> dict:
    """The analysis' loop counters, and the target of a `for` over a literal list or tuple of
    ints (`for length in (5, 9, 13)`): a new value each pass, as a range's counter."""
    out = an.counters_here()
    loop = an.loop
    for lp in loop.chain() if loop is not None else ():
        node = getattr(lp, "node", None)
        if type(node) is cst.For and type(node.target) is cst.Name and literal_ints(node.iter):
            out.setdefault(node.target.value, lp)
    return out


def _fixed_width(cut: cst.Slice, counters: dict) -> bool:
    """`xs[i:i + 4]`: a window that moves with the counter but keeps its length."""
    lo, hi = cut.lower, cut.upper
    return lo is not None and type(hi) is cst.BinaryOperation and type(hi.operator) is cst.Add \
        and code_of(hi.left) == code_of(lo) and not any(c in counters for c in names_in(hi.right))


def _cut_of(value: cst.BaseExpression, name: str) -> bool:
    """`xs = xs[:-1]`, `xs = xs[1:]`, `xs = [x for x in xs if ...]`: a list re-bound to a part of
    itself, whose length changes."""
    if type(value) is cst.Subscript and type(value.value) is cst.Name and value.value.value == name:
        return any(type(el.slice) is cst.Slice for el in value.slice)
    if type(value) is cst.ListComp and type(value.for_in.iter) is cst.Name:
        return value.for_in.iter.value == name and bool(value.for_in.ifs)
    return False


def literal_ints(it) -> bool:
    """A literal list/tuple/set of at least two different ints."""
    if type(it) not in (cst.List, cst.Tuple, cst.Set):
        return False
    values = set()
    for el in it.elements:
        v = el.value
        if type(v) is cst.UnaryOperation and type(v.operator) is cst.Minus:
            v = v.expression
        if type(v) is not cst.Integer:
            return False
        values.add(code_of(el.value))
    return len(values) > 1


def _bounded(loop, limit: int = RECOMPILE_LIMIT) -> bool:
    node = getattr(loop, "node", None)
    return type(node) is cst.For and bounded_iter(node.iter, limit)


def bounded_iter(it, limit: int = RECOMPILE_LIMIT) -> bool:
    """A literal list of fewer values than the recompile limit, or a short literal range."""
    if type(it) in (cst.List, cst.Tuple, cst.Set):
        return len(it.elements) < limit
    if type(it) is cst.Call and type(it.func) is cst.Name and it.func.value == "range":
        ints = [int(a.value.value) for a in it.args if type(a.value) is cst.Integer]
        if len(ints) == len(it.args) and ints:
            lo, hi = (0, ints[0]) if len(ints) == 1 else (ints[0], ints[1])
            step = ints[2] if len(ints) > 2 and ints[2] else 1
            return len(range(lo, hi, step)) < limit
    return False


code_of = code  # (names_in is imported above: rules import both from here)


def bound_name(an, value: cst.BaseExpression) -> Optional[str]:
    """The name the current statement assigns ``value`` to (`model = torch.compile(...)`)."""
    stmt = an.statement
    body = stmt.body if type(stmt) is cst.SimpleStatementLine else [stmt]
    for small in body:
        if type(small) in (cst.Assign, cst.AnnAssign) and small.value is value:
            targets = small.targets if type(small) is cst.Assign else [small]
            if len(targets) == 1 and type(targets[0].target) in (cst.Name, cst.Attribute):
                return code_of(targets[0].target)
    return None


def distinct_values(it) -> Optional[int]:
    """How many different values a `for` over ``it`` gives its target: a literal list, tuple or
    set (by their text), or a `range` of literal ints; None when not known."""
    if type(it) in (cst.List, cst.Tuple, cst.Set):
        if any(type(el) is cst.StarredElement for el in it.elements):
            return None
        return len({code_of(el.value) for el in it.elements})
    if type(it) is cst.Call and type(it.func) is cst.Name and it.func.value == "range":
        ints = [int(a.value.value) for a in it.args if type(a.value) is cst.Integer]
        if len(ints) == len(it.args) and ints:
            lo, hi = (0, ints[0]) if len(ints) == 1 else (ints[0], ints[1])
            step = ints[2] if len(ints) > 2 and ints[2] else 1
            return len(range(lo, hi, step))
    return None


def counter_values(counters: dict, names) -> Optional[int]:
    """The number of values the loop counters among ``names`` take together (the product over
    their loops), or None when one of them is not known."""
    total = 1
    for n in names:
        node = getattr(counters.get(n), "node", None)
        count = distinct_values(node.iter) if type(node) is cst.For else None
        if count is None:
            return None
        total *= count
    return total


MANY = 3  # values: two recompiles; one recompile (two values) is what automatic dynamic costs anyway


def recompiles_text(n: int, limit: int = RECOMPILE_LIMIT, unit: str = "values") -> str:
    """What ``n`` different guarded values (or types) cost."""
    if n - 1 >= limit:
        return (f"{n} {unit}: a recompile for each new one until `recompile_limit` ({limit}), then "
                "Dynamo runs it eagerly for the rest of the run (eager fallback)")
    return f"{n} {unit}: {n} graphs, {n - 1} recompiles (each a full compile)"


def int_of_counters(expr: cst.BaseExpression, counters: dict) -> bool:
    """An int made of loop counters and int literals (`epoch + 1`, `2 * i`, `-w`)."""
    names = []
    stack = [expr]
    while stack:
        n = stack.pop()
        if type(n) is cst.Name:
            names.append(n.value)
        elif type(n) is cst.BinaryOperation and type(n.operator) is not cst.Divide:
            stack += (n.left, n.right)
        elif type(n) is cst.UnaryOperation:
            stack.append(n.expression)
        elif type(n) is not cst.Integer:
            return False
    return bool(names) and all(n in counters for n in names)


class Drawn:
    """A name a loop draws each pass from a literal of ints (`size = random.choice((32, 40, 48))`),
    standing for a loop over them: ``node`` is that loop, written out, for the counting helpers."""

    __slots__ = ("node",)

    def __init__(self, name: str, literal) -> None:
        self.node = cst.For(target=cst.Name(name), iter=literal,
                            body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])]))


def drawn_sizes(rule, loop) -> dict:
    """Names assigned in ``loop`` (or a loop around it) from `random.choice` of a literal list or
    tuple of ints, also a module-level one: name -> Drawn."""
    out = {}
    for lp in loop.chain():
        for name, value in rule.assigned.get(id(lp), {}).items():
            if type(value) is cst.Call and code_of(value.func) in ("random.choice", "choice") and len(value.args) == 1:
                lit = value.args[0].value
                if type(lit) is cst.Name:
                    lit = getattr(rule, "literals", {}).get(lit.value)
                if literal_ints(lit):
                    out.setdefault(name, Drawn(name, lit))
    return out
