"""HPU017 changing-value-recompile: a compiled function called with a Python value that changes
every call and that Dynamo does not make dynamic: a string, the length of a growing list, a
global int it reads.

Sources: PyTorch docs, "torch.compile Troubleshooting" (recompilations, guards, ``recompile_limit``)
and "Dynamic Shapes" (automatic dynamic: int and float arguments become symbolic after one
recompilation; other Python values are guarded by value). Measured on torch 2.13
(docs/compile-target.md): a str argument, a list's length and a global int each give 8 graphs,
7 recompilations and an eager fallback over 12 calls; an int or float argument 2 graphs; a tensor 1.
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import code
from hpulint.rules.compiled_region import LoopCalls, bound_name, is_compile_call, names_in

MESSAGE = (
    "{what} from one call of the compiled `{name}` to the next: Dynamo guards on {guard} and does not make it "
    "dynamic, so each call recompiles, and after `recompile_limit` (8) it runs the function "
    "eagerly for the rest of the run (eager fallback). {fix}"
)
STR = ("`{arg}` is a string that changes", "a string's value",
       "Keep the string out of the compiled function, or pass what it encodes as an int or a tensor")
LIST = ("the list `{arg}` grows ({how} in the loop)", "a list's length",
        "Pass one stacked tensor (its size can be dynamic) or a fixed-length window")
GLOBAL = ("the global `{arg}` that it reads changes ({how} in the loop)", "a global int's value",
          "Pass it as an argument (an int argument is made dynamic after one recompile) or as a tensor")


class ChangingValueRecompile(LoopCalls):
    code = "HPU017"
    name = "changing-value-recompile"
    summary = "a compiled function called with a str, a growing list or a changing global int (recompile per call)"
    triggers = ("compile",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.compiled: dict = {}  # name called -> FunctionDef (None for a compiled module or a wrapper)
        self.defs: dict = {}  # module-level function name -> FunctionDef
        self.globals_int: set = set()  # module-level names bound to an int literal
        self.bumped: dict = {}  # id(loop) -> {name: how} int names re-bound in the loop

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        parent = self.an.function.parent  # the walk is already inside the function
        if parent is not None and parent.kind == "module":
            self.defs[node.name.value] = node
        for d in node.decorators:
            dec = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
            q = self.an.qualname(dec) or ""
            if q == "torch.compile" or q.endswith("torch_xla.compile"):
                self.compiled[node.name.value] = node

    def visit_Assign(self, node: cst.Assign) -> None:
        super().visit_Assign(node)
        an = self.an
        if an.function.kind == "module" and an.loop is None and isinstance(node.value, cst.Integer):
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    self.globals_int.add(t.target.value)
        if an.loop is not None and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            name = node.targets[0].target.value
            counters = an.counters_here()
            if any(n in counters for n in names_in(node.value)) and not _has_float(node.value):
                self.bumped.setdefault(id(an.loop), {})[name] = f"`{code(node)}`"

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        super().visit_AugAssign(node)
        loop = self.an.loop
        if loop is not None and isinstance(node.target, cst.Name) and isinstance(node.value, cst.Integer):
            self.bumped.setdefault(id(loop), {})[node.target.value] = f"`{code(node)}`"

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        an = self.an
        if is_compile_call(an, node) and node.args:
            name = bound_name(an, node)
            target = node.args[0].value
            if name is not None:
                self.compiled[name] = self.compiled.get(code(target)) if isinstance(target, cst.Name) else None
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "compile" and not node.args:
            self.compiled.setdefault(code(node.func.value), None)

    def finish(self) -> None:
        reported = set()
        for call, callee, loop, counters in self.calls:
            if callee not in self.compiled or callee in reported:
                continue
            hit = self._changing(call, loop, counters) or self._global(self.compiled[callee], loop)
            if hit is None:
                continue
            (what, guard, fix), arg, how = hit
            reported.add(callee)
            self.report(call, MESSAGE.format(what=what.format(arg=arg, how=how), name=callee, guard=guard, fix=fix))

    def _changing(self, call: cst.Call, loop, counters: dict):
        for a in call.args:
            expr = a.value
            value = self.value_in_loop(expr.value, loop) if isinstance(expr, cst.Name) else None
            for e in (expr, value):
                if e is not None and _string_of(e, counters) and self.unbounded(set(names_in(e)) & set(counters), counters):
                    return STR, code(expr), ""
            if isinstance(expr, cst.Name):
                for lp in loop.chain():
                    how = self.grown.get(id(lp), {}).get(expr.value)
                    if how is not None and not _bounded_chain(lp, self.limit):
                        return LIST, expr.value, f"`{expr.value}{how}`" if how.startswith(".") else "`+=`"
        return None

    def _reads(self, fn: cst.FunctionDef) -> set:
        """Names the function reads, with those of the same-file functions it calls (Dynamo
        inlines them and guards on the globals they read)."""
        reads, seen, todo = set(), set(), [fn]
        while todo:
            f = todo.pop()
            if id(f) in seen:
                continue
            seen.add(id(f))
            names = _body_names(f)
            reads |= names
            todo += [self.defs[n] for n in names if n in self.defs]
        return reads

    def _global(self, fn, loop):
        """A global int the compiled function reads and the loop re-binds."""
        if fn is None or loop.scope.kind != "module":
            return None
        local = {p.name.value for p in fn.params.params}
        reads = self._reads(fn)
        for lp in loop.chain():
            for name, how in self.bumped.get(id(lp), {}).items():
                if name in reads and name not in local and name in self.globals_int and not _bounded_chain(lp, self.limit):
                    return GLOBAL, name, how
        return None


def _body_names(fn: cst.FunctionDef) -> set:
    out = set()
    for stmt in fn.body.body:
        out |= set(names_in(stmt))
    return out


def _string_of(expr: cst.BaseExpression, counters: dict) -> bool:
    """A string built from a loop counter: an f-string, str(i), "..." + str(i), "...".format(i), "%d" % i."""
    if isinstance(expr, cst.FormattedString):
        return any(isinstance(p, cst.FormattedStringExpression) and any(n in counters for n in names_in(p.expression))
                   for p in expr.parts)
    if isinstance(expr, cst.Call):
        f = expr.func
        if isinstance(f, cst.Name) and f.value == "str":
            return any(n in counters for n in names_in(expr))
        if isinstance(f, cst.Attribute) and f.attr.value == "format" and isinstance(f.value, cst.SimpleString):
            return any(n in counters for n in names_in(expr))
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Multiply, cst.Modulo)):
        if _string_of(expr.left, counters) or _string_of(expr.right, counters):
            return True
        literal = any(isinstance(side, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString))
                      for side in (expr.left, expr.right))
        return literal and any(n in counters for n in names_in(expr))
    return False


def _has_float(expr: cst.BaseExpression) -> bool:
    stack = [expr]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Float) or (isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide)):
            return True
        stack += list(n.children)
    return False


def _bounded_chain(loop, limit: int) -> bool:
    from hpulint.rules.compiled_region import _bounded

    return all(_bounded(lp, limit) for lp in loop.chain())
