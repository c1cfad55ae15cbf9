"""HPU017 changing-value-recompile: a compiled function called with a Python value that changes
every call and that Dynamo does not make dynamic: a string, a list's or tuple's length, a global
int, dict entry, attribute or list it reads, a module-level list it appends to.

Sources: PyTorch docs, "torch.compile Troubleshooting" (recompilations, guards, ``recompile_limit``)
and "Dynamic Shapes" (automatic dynamic: int and float arguments become symbolic after one
recompilation; other Python values are guarded by value). Measured on torch 2.13
(docs/compile-target.md): a str argument, a list's length, a global int, an int in a global dict and
a module-level list the function appends to each give 8 graphs, 7 recompilations and an eager
fallback over 12 calls; an int or float argument (or a float in a dict) 2 graphs; a tensor 1.
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import code
from hpulint.rules.compile_call_states import call_states
from hpulint.rules.compile_function_modes import stateful_modes
from hpulint.rules.compile_global_flags import global_flag_changes
from hpulint.rules.compile_global_state import global_state_changes
from hpulint.rules.compile_lambda_globals import lambda_global
from hpulint.rules.compile_containers import TENSOR_OF_LIST, history_attrs, history_findings, tensor_of_list
from hpulint.rules.compile_arg_types import argument_types
from hpulint.rules.compile_cycled import cycled, partial_argument, structure_finding
from hpulint.rules.compile_cycled_callables import FIX_DTYPE, FIX_FUNCTION
from hpulint.rules.compile_dim_args import dim_arguments
from hpulint.rules.compile_env_reads import env_changes
from hpulint.rules.compile_key_orders import key_order_changes
from hpulint.rules.compile_mutable_defaults import mutable_defaults
from hpulint.rules.compile_grad_presence import grad_presence
from hpulint.rules.compile_feedback import _definition
from hpulint.rules.compile_dynamic_branch import compared, value_branches
from hpulint.rules.compile_list_args import list_argument
from hpulint.rules.compile_list_lengths import listed_lengths
from hpulint.rules.compile_local_classes import local_class_argument
from hpulint.rules.compile_modulo_branch import module_ints
from hpulint.rules.compile_module_args import module_argument
from hpulint.rules.compile_value_forms import _has_float, _length_of, _split_of, _string_of
from hpulint.rules.compile_scalar_index import scalar_index
from hpulint.rules.compile_specialized import COUNT_NEXT, count_next, specialized_call
from hpulint.rules.compile_string_lists import string_list_argument
from hpulint.rules.compiled_region import (MANY, LoopCalls, bound_name, compiled_why, distinct_values, int_of_counters,
                                           is_compile_call, names_in, recompiles_text)

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
GLOBAL_BUMP = ("the global `{arg}` that it reads changes ({how})", GLOBAL[1], GLOBAL[2])
LENGTH = ("the length of `{arg}` changes ({how})", "a list's or tuple's length",
          "Keep the length fixed (pad it), or pass the values as one tensor (its size can be dynamic)")
ENTRY = ("the int `{arg}` that it reads changes ({how} in the loop)", "an int kept in a global dict or "
         "object by value", "Pass it as an argument (an int argument is made dynamic after one "
         "recompile) or as a tensor")
GLOBAL_LIST = ("the global list `{arg}` that it reads grows ({how} in the loop)", "a list's length",
               "Pass one stacked tensor (its size can be dynamic) or a fixed-length window")
DICT = ("the dict `{arg}` gains a key every pass ({how} in the loop)", "a dict's keys",
        "Pass the values as one stacked tensor, or keep a fixed set of keys")
GLOBAL_DICT = ("the global dict `{arg}` that it reads gains a key every pass ({how} in the loop)",
               DICT[1], DICT[2])
CUT = ("the list `{arg}` changes length ({how} in the loop)", "a list's length",
       "Pass one stacked tensor (its size can be dynamic), or pad the list to a fixed length")
COUNTED = (
    "`{arg}` {kind} ({how}) from one call of the compiled `{name}` to the next: Dynamo guards on "
    "{guard} and does not make it dynamic, so it compiles the function once per {unit}, "
    "{values}. {fix}"
)
FIX_VALUE = ("Pass what it selects as a tensor, or keep the choice out of the compiled function "
             "(one compiled function per value)")
FIX_KEYS = ("Pass the same keys every call (a zero weight and a placeholder for what a batch lacks), or pass "
            "the values as one tensor with a mask")
FIX_TYPE = ("Give it one form before the call (always a tuple of tensors, or always a dict with the same "
            "keys), or keep the dispatch in the eager code and compile one function per form")
APPENDS = (
    "`{name}()` appends to the module-level list `{arg}`, which keeps growing from one call to the next: "
    "Dynamo guards on the list's length, so every call of the compiled `{fn}` recompiles, and once it "
    "has recompiled `recompile_limit` (8) times it runs the function eagerly for the rest of the run "
    "(eager fallback). Return the value and append it in the eager code around the compiled function "
    "(or clear the list before each call)"
)


class ChangingValueRecompile(LoopCalls):
    code = "HPU017"
    name = "changing-value-recompile"
    summary = ("a compiled function called with a str, a list of changing length, or reading a global int, dict "
               "entry or list that changes, or cycled over 3 or more strings, Enum members, container types or dict "
               "key sets, or each module of a stack built with different ints; appending to an object's list or "
               "deque, or torch.tensor() of a list argument (or of a list attribute of one), in the compiled region; "
               "an int bounding a range() loop or indexing a Python list, a float given to interpolate/dropout/pad, "
               "or a list of strings whose items it reads, changed by the loop; next() of an itertools.count in the "
               "compiled region; a list of ints drawn at random each pass, or a list attribute the loop appends to; "
               "a branch on a number argument (or on it modulo a constant) the calls give values on both sides of its test; 3 or more autocast "
               "states, all three grad modes or combinations of bool flags across the calls of one compiled callable; nested tuples of 3 or "
               "more structures, a functools.partial whose float keyword the loop changes, or a lambda made in a "
               "module-level loop that reads a global the loop changes; torch.set_num_threads or set_default_dtype set to 3 "
               "or more values around the calls; an argument cycled over 3 or more functions, module classes or dtypes; "
               "use_deterministic_algorithms or reduced-precision flags in 3 or more combinations; a TorchFunctionMode "
               "that counts into itself entered around the calls; a parameter used as a dimension given 3 or more values; "
               "p.grad is None tested over a module that runs a data- or random-picked subset of its submodules; a "
               "table indexed by the 0-d timestep tensors a loop walks (recompile per value)")
    triggers = ("compile",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.compiled: dict = {}  # name called -> FunctionDef (None for a compiled module or a wrapper)
        self.defs: dict = {}  # module-level function name -> FunctionDef
        self.globals_int: set = set()  # module-level names bound to an int literal
        self.bumped: dict = {}  # id(loop) -> {name: how} int names re-bound in the loop
        self.module_names: set = set()  # names bound at module level, outside loops (and classes)
        self.module_lists: set = set()  # ... to a list (`history = []`)
        self.entries: dict = {}  # id(loop) -> {name: how}: `name[k] = int` / `name.a = int` in the loop
        self.declared: dict = {}  # id(function scope) -> names it declares `global`
        self.global_bumps: dict = {}  # name -> how: `global NAME; NAME += 1` in some function
        self.enums: dict = {}  # Enum class name -> number of members
        self.histories: dict = {}  # class name -> {attr: (kind, maxlen)} (compile_containers)
        self.obj_appends: list = []  # (call, function scope, attr): `self.<attr>.append(...)` in a method
        self.literals: dict = {}  # module-level name -> literal list or tuple
        self.dicts: dict = {}  # module-level name -> literal dict
        self.targets: dict = {}  # name called -> text of what it compiles (`cgen = torch.compile(generate)`)
        self.counts: set = set()  # module-level names and `Class.attr` bound to an itertools.count
        self.branches: list = []  # (function scope, compared(...)): `if scale > 1.0:` in a function
        self.sites: dict = {}  # name called -> the node that compiles it (compile_call_states)
        self.ints = None  # module-level names bound once to an int literal (compile_modulo_branch)

    def visit_If(self, node: cst.If) -> None:
        if self.ints is None:
            self.ints = module_ints(self.module)  # (compile_modulo_branch)
        hit = compared(self.an, node, self.ints)
        if hit is not None and hit[3] == "value":  # a branch on a number argument (compile_dynamic_branch)
            self.branches.append((self.an.function, hit))

    def visit_Global(self, node: cst.Global) -> None:
        self.declared.setdefault(id(self.an.function), set()).update(n.name.value for n in node.names)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.histories[node.name.value] = history_attrs(node)
        if self.an.loop is None and self.an.function.kind == "module":
            self.module_names.add(node.name.value)
        bases = [code(b.value).rsplit(".", 1)[-1] for b in node.bases]
        if any(b in ("Enum", "StrEnum", "Flag") for b in bases):  # IntEnum members are ints
            members = {t.target.value for st in node.body.body if type(st) is cst.SimpleStatementLine
                       for small in st.body if type(small) is cst.Assign for t in small.targets
                       if type(t.target) is cst.Name and not t.target.value.startswith("_")}
            self.enums[node.name.value] = len(members)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        parent = self.an.function.parent  # the walk is already inside the function
        if parent is not None and parent.kind == "module":
            self.defs[node.name.value] = node
        for d in node.decorators:
            dec = d.decorator.func if type(d.decorator) is cst.Call else d.decorator
            q = self.an.qualname(dec) or ""
            if q == "torch.compile" or q.endswith("torch_xla.compile"):
                self.compiled[node.name.value] = node
                self.sites.setdefault(node.name.value, d.decorator)

    def visit_Assign(self, node: cst.Assign) -> None:
        super().visit_Assign(node)
        an = self.an
        if type(node.value) is cst.Call and (an.qualname(node.value.func) or "") == "itertools.count":
            fn = an.function
            for t in node.targets:
                if type(t.target) is cst.Name and fn.kind == "module":
                    self.counts.add(t.target.value)
                elif type(t.target) is cst.Attribute and code(t.target.value) == "self" and fn.cls is not None:
                    self.counts.add(f"{fn.cls.name}.{t.target.attr.value}")
        if an.function.kind == "module" and an.loop is None:
            for t in node.targets:
                if type(t.target) is cst.Name:
                    self.module_names.add(t.target.value)
                    if type(node.value) is cst.Integer:
                        self.globals_int.add(t.target.value)
                    if _is_list(node.value):
                        self.module_lists.add(t.target.value)
                    if type(node.value) in (cst.List, cst.Tuple):
                        self.literals[t.target.value] = node.value
                    elif type(node.value) is cst.Dict:
                        self.dicts[t.target.value] = node.value
        if an.loop is not None and len(node.targets) == 1:
            target = node.targets[0].target
            counters = self.counters_here()
            if type(target) is cst.Name:
                if any(n in counters for n in names_in(node.value)) and not _has_float(node.value):
                    self.bumped.setdefault(id(an.loop), {})[target.value] = f"`{code(node)}`"
            elif type(target) in (cst.Subscript, cst.Attribute) and type(target.value) is cst.Name \
                    and int_of_counters(node.value, counters):
                self.entries.setdefault(id(an.loop), {})[target.value.value] = (code(target), f"`{code(node)}`")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        super().visit_AugAssign(node)
        fn = self.an.function
        if fn.kind == "function" and type(node.target) is cst.Name and type(node.value) is cst.Integer \
                and type(node.operator) in (cst.AddAssign, cst.SubtractAssign) \
                and node.target.value in self.declared.get(id(fn), ()):
            self.global_bumps.setdefault(node.target.value, f"`{code(node)}` in {fn.name}()")
        loop = self.an.loop
        if loop is not None and type(node.target) is cst.Name and type(node.value) is cst.Integer:
            self.bumped.setdefault(id(loop), {})[node.target.value] = f"`{code(node)}`"

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        an = self.an
        func = node.func
        if type(func) is cst.Attribute and func.attr.value in ("append", "appendleft", "extend") \
                and an.function.kind == "function" and an.function.cls is not None:
            held = func.value.value if type(func.value) is cst.Subscript else func.value  # `self.maps[k].append`
            if type(held) is cst.Attribute and code(held.value) == "self":
                keyed = "[]" if held is not func.value else ""  # a list inside a dict attribute
                self.obj_appends.append((node, an.function, held.attr.value + keyed))
        if is_compile_call(an, node) and node.args:
            name = bound_name(an, node)
            target = node.args[0].value
            if name is not None:
                self.compiled[name] = self.compiled.get(code(target)) if type(target) is cst.Name else None
                self.targets[name] = code(target)
                self.sites[name] = node
        elif type(node.func) is cst.Attribute and node.func.attr.value == "compile" and not node.args:
            self.compiled.setdefault(code(node.func.value), None)
            self.sites.setdefault(code(node.func.value), node)
        if an.function.kind == "function" and type(node.func) is cst.Name and node.func.value == "next":
            fn = an.function

            def when(fn=fn):
                it = count_next(fn, node, self.counts)
                if it is None or compiled_why(an, fn) is None \
                        or not any(callee in self.compiled for _, callee, _, _ in self.calls):
                    return None
                return COUNT_NEXT.format(it=it, fn=fn.name, limit=self.limit)
            self.report(node, "{why}", when=when)

    def finish(self) -> None:
        self._object_histories()
        for site, message in call_states(self.module, self.an, self.sites, self._def):
            self.report(site, message)  # autocast states, flag combinations (compile_call_states)
        for site, message in global_state_changes(self.an, self.module, set(self.compiled), self.limit) + \
                global_flag_changes(self.an, self.module, set(self.compiled), self.literals, self.limit):
            self.report(site, message)  # set_num_threads(n), determinism flags per pass (compile_global_state/flags)
        for node, message in mutable_defaults(self.an, self.limit) + key_order_changes(
                self.an, self.module, set(self.compiled), self._def, self.limit) + (env_changes(
                self.an, self.module, set(self.compiled), self.limit) if "environ" in self.ctx.source else []):
            self.report(node, message)  # a grown default, key orders, env settings (compile_mutable_defaults/key_orders/env_reads)
        for stmt, message in stateful_modes(self.module, set(self.compiled)):
            self.report(stmt, message)  # a TorchFunctionMode counting into itself (compile_function_modes)
        looped = [(c, callee) for c, callee, loop, _ in self.calls if _passes(loop) >= MANY] \
            if ".grad" in self.ctx.source else []
        for node, message in dim_arguments(self.an, self.module, self.compiled, self._def, self.limit) + \
                grad_presence(self.module, self.compiled, self._def, looped, self.limit):
            self.report(node, message)  # a dimension given 3+ values, grads None by turns (compile_dim_args/grad_presence)
        for node, message in argument_types(self.module, set(self.compiled), self._def, self.limit):
            self.report(node, message)  # an argument given 3+ Python types across the calls (compile_arg_types)
        for node, when in value_branches(self):
            self.report(node, "{why}", when=when)
        reported = set()
        for callee in self.compiled:
            for node, param, arg in tensor_of_list(self.module, _definition(self.module, callee), callee):
                reported.add(callee)
                self.report(node, TENSOR_OF_LIST.format(stmt=code(node), param=param, arg=arg, limit=self.limit,
                                                        fn=_definition(self.module, callee)[0].name.value))
        for call, callee, loop, counters in self.calls:
            if callee not in self.compiled or callee in reported:
                continue
            fn = self.compiled[callee]
            grows = [a for a in self._appends(callee, fn) if not self.reset_in(a[1], loop)] if fn is not None else []
            for node, name, inner in grows:
                reported.add(callee)
                self.report(node, APPENDS.format(name=inner, arg=name, fn=callee))
            if grows:
                continue
            local = local_class_argument(self, call, callee, loop)
            if local is not None:  # a batch class declared by every call of its collate function (compile_local_classes)
                reported.add(callee)
                self.report(call, local)
                continue
            stacked = module_argument(self.module, fn, call, loop.node, self.limit) if fn is not None else None
            if stacked is not None:  # each module of a stack built with different ints (compile_module_args)
                reported.add(callee)
                self.report(call, stacked)
                continue
            listed = list_argument(self, loop, call, callee)
            if listed is not None:  # a list of ints drawn at random, a list attribute grown (compile_list_args)
                reported.add(callee)
                self.report(call, listed)
                continue
            lam = lambda_global(self, call, callee, loop, counters)
            if lam is not None:  # a module-level lambda reading a global the loop changes (compile_lambda_globals)
                reported.add(callee)
                self.report(call, lam)
                continue
            indexed = scalar_index(self.module, *self._def(callee), call, loop, callee, self.limit)
            if indexed is not None:  # a 0-d tensor the loop walks, used as a table index (compile_scalar_index)
                reported.add(callee)
                self.report(*indexed)
                continue
            hit = self._changing(call, loop, counters) or self._global(self.compiled[callee], loop)
            if hit is None:
                counted = cycled(self, call, loop, counters)
                if counted is not None and counted[3] == "structure":  # nested tuples (compile_cycled)
                    counted, shaped = None, structure_finding(self, call, callee, counted, *self._def(callee))
                    if shaped is not None:
                        reported.add(callee)
                        self.report(call, shaped)
                        continue
                spec = self._specialized(call, callee, loop, counters) if counted is None else None
                spec = spec or (partial_argument(self, call, callee, loop, counters, self.defs)
                                if counted is None else None)
                spec = spec or (string_list_argument(self, call, callee, loop, counters, *self._def(callee))
                                if counted is None else None)  # new strings every pass (compile_string_lists)
                spec = spec or (listed_lengths(self, call, callee, loop, counters) if counted is None else None)
                if spec is not None:
                    reported.add(callee)
                    self.report(call, spec)
                if counted is not None:
                    reported.add(callee)
                    arg, kind, how, guard, n = counted
                    unit = next((u for u in ("function", "dtype", "module type", "type") if u.split()[0] in guard),
                                None) or ("key set" if "keys" in guard else "value")
                    fix = {"type": FIX_TYPE, "key set": FIX_KEYS, "dtype": FIX_DTYPE}.get(
                        unit, FIX_FUNCTION if unit in ("function", "module type") else FIX_VALUE)
                    self.report(call, COUNTED.format(arg=arg, kind=kind, how=how, name=callee, guard=guard, unit=unit,
                                                     values=recompiles_text(n, self.limit, unit + "s"), fix=fix))
                continue
            (what, guard, fix), arg, how = hit
            reported.add(callee)
            self.report(call, MESSAGE.format(what=what.format(arg=arg, how=how), name=callee, guard=guard, fix=fix))

    def _def(self, callee: str) -> tuple:
        """(FunctionDef, parameters not passed) of what the compiled ``callee`` runs, or (None, 0)."""
        fn, skip = self.compiled.get(callee), 0
        if fn is None:
            fn = self.defs.get(self.targets.get(callee, ""))
        if fn is None:
            fn, skip = _definition(self.module, callee)
        return fn, skip

    def _specialized(self, call, callee: str, loop, counters: dict):
        """An int bounding a `range` loop, a float Dynamo needs as a number, or a list of strings it
        reads, that the loop changes (compile_specialized)."""
        fn, skip = self._def(callee)
        if fn is None:
            return None
        return specialized_call(self, call, callee, loop, counters, fn, skip, self.literals)

    def _object_histories(self) -> None:
        """`self.history.append(...)` on a list or deque of a plain object, in the compiled region."""
        for node, when in history_findings(self.an, self.obj_appends, self.histories, self.limit):
            self.report(node, "{why}", when=when)

    def _changing(self, call: cst.Call, loop, counters: dict):
        for a in call.args:
            expr = a.value
            value = self.value_in_loop(expr.value, loop) if type(expr) is cst.Name else None
            for e in (expr, value):
                varying = self.unbounded(set(names_in(e)) & set(counters), counters) if e is not None else set()
                if varying and _string_of(e, counters):
                    return STR, code(expr), ""
                if varying and _length_of(e, counters):
                    return LENGTH, code(expr), f"`{code(e)}`"
                split = _split_of(e) if e is not None else None
                if split is not None and (varying or self.unbounded(self.shape_counters(split, loop, counters), counters)):
                    return LENGTH, code(expr), f"as many pieces as the size of `{code(split)}` allows"
            if type(expr) is cst.Name:
                for lp in loop.chain():
                    how = self.grown.get(id(lp), {}).get(expr.value)
                    if how is not None and not _bounded_chain(lp, self.limit):
                        return _grown(LIST, expr.value, how)
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
        """A global the compiled function reads and the loop changes: an int it re-binds, an int
        it stores in a dict or an object's attribute, a list it grows."""
        if fn is None:
            return None
        local = {p.name.value for p in fn.params.params}
        reads = self._reads(fn) - local
        for name, how in self.global_bumps.items():
            if name in reads and name in self.globals_int:
                return GLOBAL_BUMP, name, how  # a counter: a new value each time its function runs
        if loop.scope.kind != "module":
            return None
        for lp in loop.chain():
            if _bounded_chain(lp, self.limit):
                continue
            for name, how in self.bumped.get(id(lp), {}).items():
                if name in reads and name in self.globals_int:
                    return GLOBAL, name, how
            for name, (target, how) in self.entries.get(id(lp), {}).items():
                if name in reads and name in self.module_names:
                    return ENTRY, target, how
            for name, how in self.grown.get(id(lp), {}).items():
                if name in reads and name in self.module_names and not self.reset_in(name, loop):
                    return _grown(GLOBAL_LIST, name, how)
        return None

    def _appends(self, callee: str, fn: cst.FunctionDef) -> list:
        """(append call, list name, function name) for each module-level list that the compiled
        function (or a same-file function it calls) appends to."""
        out, seen, todo = [], set(), [fn]
        while todo:
            f = todo.pop()
            if id(f) in seen:
                continue
            seen.add(id(f))
            local = _bound_in(f)
            for call in _calls_in(f):
                func = call.func
                if type(func) is cst.Attribute and func.attr.value in ("append", "extend", "insert") \
                        and type(func.value) is cst.Name and func.value.value in self.module_lists \
                        and func.value.value not in local:
                    out.append((call, func.value.value, f.name.value))
                elif type(func) is cst.Name and func.value in self.defs:
                    todo.append(self.defs[func.value])
        return out


def _grown(kind, name: str, how: str):
    """The message parts for a container the loop changes: `.append()`/`+=`, a new key, a cut."""
    if how.startswith("["):
        return (DICT if kind is LIST else GLOBAL_DICT), name, f"`{name}{how}`"
    if how.startswith(" = "):
        return (CUT if kind is LIST else kind), name, f"`{name}{how}`"
    return kind, name, f"`{name}{how}`" if how.startswith(".") else "`+=`"


def _is_list(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.List or (type(expr) is cst.Call and type(expr.func) is cst.Name
                                          and expr.func.value == "list" and not expr.args)


def _bound_in(fn: cst.FunctionDef) -> set:
    """Names the function binds locally (parameters, assignments), unless declared global."""
    out = {p.name.value for p in fn.params.params}
    declared = set()
    stack = list(fn.body.body)
    while stack:
        n = stack.pop()
        if type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(n) is cst.Global:
            declared |= {g.name.value for g in n.names}
        elif type(n) is cst.AssignTarget and type(n.target) is cst.Name:
            out.add(n.target.value)
        elif type(n) in (cst.AnnAssign, cst.AugAssign) and type(n.target) is cst.Name:
            out.add(n.target.value)
        stack += list(n.children)
    return out - declared


def _calls_in(fn: cst.FunctionDef) -> list:
    out, stack = [], list(fn.body.body)
    while stack:
        n = stack.pop()
        if type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(n) is cst.Call:
            out.append(n)
        stack += list(n.children)
    return out


def _body_names(fn: cst.FunctionDef) -> set:
    out = set()
    for stmt in fn.body.body:
        out |= set(names_in(stmt))
    return out


def _passes(loop) -> int:
    """How many passes a `for` over a literal makes (a large number when not known)."""
    node = getattr(loop, "node", None)
    n = distinct_values(node.iter) if type(node) is cst.For else None
    return MANY if n is None else n


def _bounded_chain(loop, limit: int) -> bool:
    from hpulint.rules.compiled_region import _bounded

    return all(_bounded(lp, limit) for lp in loop.chain())
