"""Code Dynamo traces although no call of the compiled region names it, for the compile rules
(HPU012-HPU017). The link follows the calls a compiled function makes; these are reached another
way. Measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md):

- a ``@property`` getter that a compiled method reads as ``self.<name>``: Dynamo runs the getter
  inline, so an ``.item()`` in it breaks the graph there (a getter that stays on the device,
  ``.clamp(max=...)``, is traced: one graph);
- a forward hook or forward pre-hook (``register_forward_hook``/``register_forward_pre_hook``: a
  ``def``, a closure a factory returns, a lambda, a bound method, a hook object's ``__call__``
  registered as ``layer.register_forward_pre_hook(self)`` with ``layer`` given to its constructor)
  on the compiled module or on a module it holds: Dynamo traces a module's hooks with its call, the top module's too, so ``int()``
  of a tensor in the hook breaks the graph there; the same hook on a module that runs eagerly
  costs nothing;
- a function or lambda kept in a literal dict, list or tuple and called through it in the compiled
  region (``LOSSES[task](...)``, ``TABLE.get(name)(...)``, ``fn = OPS[i]; fn(x)``): Dynamo looks it
  up and inlines it, so mask indexing or ``.item()`` in it breaks the graph there;
- a function decorated with a name bound to ``functools.partial(torch.compile, ...)``
  (``compile_static = functools.partial(torch.compile, dynamic=False)``, then ``@compile_static``).

The functions of the file those call are reached too. A hook's parameters (the module's inputs,
its output) and the parameters of a function called through a table (the caller's arguments) get
the values they are given, so the rules know a tensor there (``kind``).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.link_targets import TORCH_CALL_MACHINERY
from hpulint.analysis.resolve import Resolver
from hpulint.analysis.syntax import child_nodes, code, target_names
from hpulint.analysis.values import SEQ_TENSOR, TENSOR, UNKNOWN, r
from hpulint.rules.compile_dunder_reads import callback_why, dunder_why
from hpulint.rules.compile_reach_syntax import (BoundParams, class_called, def_in, has_param, loop_targets,
                                                 reads_attr, returned_functions, same_or_sub, walk_body)

HOOKS = {"register_forward_hook": "forward hook", "register_forward_pre_hook": "forward pre-hook"}
SUBMODULES = frozenset({"modules", "children", "named_modules", "named_children", "get_submodule", "values",
                        "items"})
ITERATED = frozenset({"enumerate", "zip", "list", "tuple", "reversed", "sorted", "filter", "iter"})
DISABLE = ("torch.compiler.disable", "torch._dynamo.disable", "torch._disable_dynamo")
PARTIALS = ("functools.partial", "partial")
_COMPS = (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)


def compile_partial(an, value) -> bool:
    """`functools.partial(torch.compile, ...)`: a compile with those keywords."""
    return type(value) is cst.Call and (an.qualname(value.func) or "") in PARTIALS and bool(value.args) \
        and (an.qualname(value.args[0].value) or "") == "torch.compile"


def reach(an) -> "Reach":
    """The file's reach (made once, after the link; kept on the analysis, freed with it)."""
    got = an.__dict__.get("_compile_reach")
    if got is None:
        got = an.__dict__["_compile_reach"] = Reach(an)
    return got


def reached_why(an, fn) -> Optional[str]:
    """Why Dynamo traces ``fn`` although the link does not say it is compiled, or None."""
    return reach(an).why(an, fn)


def reached_kind(an, v) -> str:
    """The kind of ``v`` with the parameters of reached hooks and table functions bound to what
    they are given ("unknown" when that says nothing)."""
    return reach(an).kind(an, v)


class Reach:
    def __init__(self, an) -> None:
        self.fns = {id(f.node): f for f in an.all_functions if f.kind == "function"}
        self.memo: dict = {}
        self.busy: set = set()
        self.params: dict = {}  # (fid, parameter) -> R given to it
        self.resolver = None
        self.hooks: dict = {}  # id(def or lambda node) -> [(kind, receiver, class node, functions, loops)]
        self.tables: dict = {}  # table name -> ids of the defs and lambdas it holds
        self.members: dict = {}  # id(def or lambda node) -> table names
        self.partials: dict = {}  # name -> functools.partial(torch.compile, ...) call
        self.wrapped: dict = {}  # def name -> (wrapper name, call): `f2 = compile_static(f)`
        self.compiled_names: set = set()  # X in torch.compile(X), X.compile(), torch_xla.compile(X)
        self.assigned: dict = {}  # id(function node or module) -> {name: value last assigned}
        self.table_calls: list = []  # (caller scope, call, table name)
        self.callers: dict = {}  # id(def node) -> [(caller scope, call)] within the file
        self.methods: list = []  # (`obj.m`, class node, functions) given to torch.compile: a bound method
        self.made: dict = {}  # class name -> [(`Name(...)` call, functions, loops)]: hook objects' receivers
        module = an.module_scope.node
        self.module = module
        for st in module.body:  # the wrappers first: without them or a compiled function, nothing is reached
            for small in st.body if type(st) is cst.SimpleStatementLine else ():
                if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name \
                        and compile_partial(an, small.value):
                    self.partials[small.targets[0].target.value] = small.value
        self.active = bool(self.partials) or any(k.startswith("compile") for k in an.evidence) \
            or any(an.compiled_why(f) for f in self.fns.values())
        if self.active:
            self._scan(an, module)
            self._table_calls(an)
            self._callers(an)

    # --- after the link ----------------------------------------------------------------------

    def why(self, an, fn) -> Optional[str]:
        if not self.active or fn is None or fn.kind != "function":
            return None
        key = id(fn)
        if key in self.memo:
            return self.memo[key]
        if key in self.busy:
            return None
        self.busy.add(key)
        try:
            out = self._why(an, fn)
        finally:
            self.busy.discard(key)
        self.memo[key] = out
        return out

    def _full(self, an, fn) -> Optional[str]:
        return an.compiled_why(fn) or self.why(an, fn)

    def _why(self, an, fn) -> Optional[str]:
        node = fn.node
        if any(d in DISABLE for d in fn.decorators):
            return None
        for d in getattr(node, "decorators", ()):
            dec = d.decorator
            if type(dec) is cst.Name and dec.value in self.partials:
                return f"decorated with `@{dec.value}`, a `functools.partial` of `torch.compile`"
        if fn.parent is not None and fn.parent.kind == "module" and fn.name in self.wrapped:
            name, _ = self.wrapped[fn.name]
            return f"compiled by `{name}(...)`, a `functools.partial` of `torch.compile`"
        for finder in (self._method, self._property, self._hook, self._table, self._callee, self._dunder):
            out = finder(an, fn)
            if out is not None:
                return out
        return None

    def _method(self, an, fn) -> Optional[str]:
        """`self.m = torch.compile(self.m)` in the class (or `torch.compile(obj.m)`, `obj = C(...)`)."""
        for attr, cls, funcs in self.methods if fn.cls is not None else ():
            owner = attr.value
            if attr.attr.value != fn.name or fn.name in TORCH_CALL_MACHINERY:
                continue
            if type(owner) is cst.Name and owner.value == "self" and cls is fn.cls.node \
                    or type(owner) is cst.Name and class_called(self, owner.value, funcs) == fn.cls.name:
                return f"compiled as a bound method (`torch.compile({code(attr)})`)"
        return None

    def _property(self, an, fn) -> Optional[str]:
        if fn.cls is None or "property" not in fn.decorators:
            return None
        for g in self.fns.values():
            if g is fn or g.cls is None or not g.params or not same_or_sub(g.cls, fn.cls):
                continue
            if not reads_attr(g.node, g.params[0], fn.name):
                continue
            if self._full(an, g):
                return f"a property the compiled {g.cls.name}.{g.name}() reads as `self.{fn.name}`"
        return None

    def _hook(self, an, fn) -> Optional[str]:
        for kind, recv, cls, funcs, loops in self.hooks.get(id(fn.node), ()):
            runs = self._runs_compiled(an, recv, cls, funcs, loops)
            if runs is None:
                continue
            self._hook_params(fn, kind)
            return f"a {kind} on `{code(recv)}`, {runs} (Dynamo traces a module's hooks with its call)"
        return None

    def _table(self, an, fn) -> Optional[str]:
        names = self.members.get(id(fn.node))
        if not names:
            return None
        for g, call, table in self.table_calls:
            if table not in names or g is fn or not self._full(an, g):
                continue
            self._call_params(an, fn, g, call)
            return (f"kept in `{table}` and called through it in the compiled {g.name}() "
                    f"(`{code(call.func)}(...)`)")
        return None

    def _callee(self, an, fn) -> Optional[str]:
        for g, call in self.callers.get(id(fn.node), ()):
            if g is fn or an.compiled_why(g):
                continue  # a function the link knows is compiled: it would have said so
            why = self.why(an, g)
            if why is not None:
                return f"called from {g.name}(), {why}"
        return None

    def _dunder(self, an, fn) -> Optional[str]:
        """`__len__`/`__bool__` run by `len(x)`/`if x:`, a callback method (compile_dunder_reads)."""
        return dunder_why(self, an, fn) or callback_why(self, an, fn)

    def _runs_compiled(self, an, recv, cls, funcs, loops) -> Optional[str]:
        """How the module ``recv`` (a hook's receiver) runs inside a compiled region, or None."""
        root = self._root(recv, funcs, loops, 0)
        if root == "self" and cls is not None:
            for g in self.fns.values():
                if g.cls is not None and g.cls.node is cls and g.name == "forward" and self._full(an, g):
                    return f"which the compiled {g.cls.name}.forward() runs"
            return None
        if root is not None and root in self.compiled_names:
            return f"a module the compiled `{root}` runs"
        if root is not None and cls is not None and funcs and type(funcs[-1]) is cst.FunctionDef \
                and funcs[-1].name.value == "__init__":  # a hook object: `layer` given to `LSUVInit(layer)`
            params = [p.name.value for p in funcs[-1].params.params][1:]
            k = params.index(root) if root in params else -1
            for call, at_funcs, at_loops in self.made.get(cls.name.value, ()) if k >= 0 else ():
                given = [a.value for a in call.args if a.keyword is None]
                given = given[k] if k < len(given) else next((a.value for a in call.args if a.keyword is not None
                                                             and a.keyword.value == root), None)
                top = self._root(given, at_funcs, at_loops, 1) if given is not None else None
                if top is not None and top in self.compiled_names:
                    return f"a module the compiled `{top}` runs"
        return None

    def _root(self, expr, funcs, loops, depth: int) -> Optional[str]:
        """The name a module expression starts from, through `for` targets and assignments:
        `act` in `for i, act in enumerate(model.acts)` -> model."""
        while True:
            if type(expr) in (cst.Attribute, cst.Subscript):
                expr = expr.value
            elif type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in SUBMODULES:
                expr = expr.func.value  # model.modules(), model.get_submodule("x")
            elif type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value in ITERATED \
                    and expr.args:
                expr = expr.args[0].value
            else:
                break
        if type(expr) is not cst.Name or depth > 4:
            return None
        name = expr.value
        if name == "self" or name in self.compiled_names:
            return name
        for lp in reversed(loops):
            for target, it in loop_targets(lp):
                if name in target_names(target):
                    return self._root(it, funcs, loops, depth + 1)
        for scope in (*reversed(funcs), self.module):
            value = self.assigned.get(id(scope), {}).get(name)
            if value is not None:
                return self._root(value, funcs, (), depth + 1)
        return name

    # --- parameters --------------------------------------------------------------------------

    def kind(self, an, v) -> str:
        if not self.params or not has_param(v):
            return UNKNOWN
        if self.resolver is None:
            self.resolver = Resolver(BoundParams(an.resolver.env, self.params))
        return self.resolver(v).kind

    def _hook_params(self, fn, kind: str) -> None:
        params = [p for p in fn.params if not p.startswith("*")]
        if fn.cls is not None and params and params[0] == "self":
            params = params[1:]
        if len(params) >= 2:
            self._bind(fn.fid, params[1], r(SEQ_TENSOR))  # the module's positional inputs
        if kind == "forward hook" and len(params) >= 3:
            self._bind(fn.fid, params[-1], r(TENSOR))  # its output

    def _call_params(self, an, fn, g, call) -> None:
        site = next((s for s in g.calls if s.node is call), None)
        if site is None:
            return
        params = [p for p in fn.params if not p.startswith("*")]
        for k, v in enumerate(site.args):
            if v is None or k >= len(params):
                break
            self._bind(fn.fid, params[k], an.resolve(v))
        for key, v in site.kwargs.items():
            if key in params and v is not None:
                self._bind(fn.fid, key, an.resolve(v))

    def _bind(self, fid: str, name: str, got) -> None:
        if got.kind != UNKNOWN and (fid, name) not in self.params:
            self.params[(fid, name)] = got
            self.resolver = None

    # --- the walk (once per file) ------------------------------------------------------------

    def _scan(self, an, module: cst.Module) -> None:
        defs = {st.name.value for st in module.body if type(st) is cst.FunctionDef}
        stack = [(module, None, (), ())]
        while stack:
            node, cls, funcs, loops = stack.pop()
            tp = type(node)
            if tp is cst.Call:
                self._call(an, node, cls, funcs, loops)
            elif tp is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
                name = node.targets[0].target.value
                owner = funcs[-1] if funcs else module
                self.assigned.setdefault(id(owner), {})[name] = node.value
                if not funcs:
                    self._module_assign(an, name, node.value, defs)
            if tp is cst.ClassDef:
                stack += [(c, node, funcs, loops) for c in child_nodes(node)]
            elif tp in (cst.FunctionDef, cst.Lambda):
                stack += [(c, cls, funcs + (node,), ()) for c in child_nodes(node)]
            elif tp is cst.For:
                stack.append((node.iter, cls, funcs, loops))
                stack += [(c, cls, funcs, loops + (node,)) for c in (node.body, node.orelse) if c is not None]
            elif tp in _COMPS:
                stack += [(c, cls, funcs, loops + (node,)) for c in child_nodes(node)]
            else:
                stack += [(c, cls, funcs, loops) for c in child_nodes(node)]

    def _module_assign(self, an, name: str, value, defs: set) -> None:
        if type(value) is cst.Call and type(value.func) is cst.Name and value.func.value in self.partials \
                and value.args and type(value.args[0].value) is cst.Name:
            self.wrapped[value.args[0].value.value] = (value.func.value, value)
        elif type(value) in (cst.Dict, cst.List, cst.Tuple):
            held = [el.value for el in value.elements if type(el) in (cst.DictElement, cst.Element)]
            ids = set()
            for v in held:
                if type(v) is cst.Lambda:
                    ids.add(id(v))
                elif type(v) is cst.Name and v.value in defs:
                    ids |= {id(f.node) for f in self.fns.values()
                            if f.parent is not None and f.parent.kind == "module" and f.name == v.value}
            if ids:
                self.tables[name] = ids
                for i in ids:
                    self.members.setdefault(i, set()).add(name)

    def _call(self, an, node: cst.Call, cls, funcs, loops) -> None:
        func = node.func
        if type(func) is cst.Name:
            self.made.setdefault(func.value, []).append((node, funcs, loops))
        if type(func) is cst.Attribute and func.attr.value in HOOKS and node.args:
            for target in self._hook_defs(node.args[0].value, cls, funcs):
                self.hooks.setdefault(id(target), []).append((HOOKS[func.attr.value], func.value, cls, funcs, loops))
        if _is_compile_call(an, node) and node.args and type(node.args[0].value) is cst.Name:
            self.compiled_names.add(node.args[0].value.value)
        elif _is_compile_call(an, node) and node.args and type(node.args[0].value) is cst.Attribute:
            self.methods.append((node.args[0].value, cls, funcs))  # `torch.compile(self.compute_loss)`
        elif type(func) is cst.Attribute and func.attr.value == "compile" and not node.args \
                and type(func.value) is cst.Name:
            self.compiled_names.add(func.value.value)

    def _hook_defs(self, hook, cls, funcs) -> list:
        """The def or lambda nodes a hook argument runs."""
        if type(hook) is cst.Lambda:
            return [hook]
        if type(hook) is cst.Call and hook.args and (code(hook.func) in PARTIALS):
            return self._hook_defs(hook.args[0].value, cls, funcs)
        if type(hook) is cst.Name and hook.value == "self" and cls is not None:  # a hook object: its `__call__`
            return [st for st in cls.body.body if type(st) is cst.FunctionDef and st.name.value == "__call__"]
        if type(hook) is cst.Attribute and type(hook.value) is cst.Name and hook.value.value == "self" \
                and cls is not None:
            return [st for st in cls.body.body if type(st) is cst.FunctionDef and st.name.value == hook.attr.value]
        if type(hook) is cst.Name:
            found = def_in(funcs, self.module, hook.value)
            return [found] if found is not None else []
        if type(hook) is cst.Call and type(hook.func) is cst.Name:
            factory = def_in(funcs, self.module, hook.func.value)
            return returned_functions(factory) if factory is not None else []
        return []

    def _table_calls(self, an) -> None:
        if not self.tables:
            return
        for g in self.fns.values():
            picked = {}  # local name -> table: `fn = LOSSES[task]`
            for n in walk_body(g.node):
                if type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Name:
                    t = self._table_of(n.value)
                    if t is not None:
                        picked[n.targets[0].target.value] = t
            for n in walk_body(g.node):
                if type(n) is not cst.Call:
                    continue
                t = self._table_of(n.func)
                if t is None and type(n.func) is cst.Name:
                    t = picked.get(n.func.value)
                if t is not None:
                    self.table_calls.append((g, n, t))

    def _table_of(self, expr) -> Optional[str]:
        """`T[k]`, `T.get(k)`, `self.T[k]` on a table of the file: its name."""
        if type(expr) is cst.Subscript:
            base = expr.value
        elif type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "get":
            base = expr.func.value
        else:
            return None
        name = base.value if type(base) is cst.Name else base.attr.value if type(base) is cst.Attribute else None
        return name if name in self.tables else None

    def _callers(self, an) -> None:
        """Calls, within the file, of the file's functions: `helper(x)`, `self.helper(x)`."""
        by_name: dict = {}
        for f in self.fns.values():
            if type(f.node) is cst.FunctionDef:
                by_name.setdefault(f.name, []).append(f)
        for g in self.fns.values():
            for site in g.calls:
                func = site.node.func
                if type(func) is cst.Name:
                    targets = [f for f in by_name.get(func.value, ()) if f.cls is None]
                elif type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self" \
                        and g.cls is not None:
                    targets = [f for f in by_name.get(func.attr.value, ()) if f.cls is g.cls]
                else:
                    continue
                for f in targets:
                    self.callers.setdefault(id(f.node), []).append((g, site.node))


def _is_compile_call(an, node: cst.Call) -> bool:
    from hpulint.rules.compiled_region import is_compile_call  # (compiled_region imports this module)

    return is_compile_call(an, node)
