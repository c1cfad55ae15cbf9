"""HPU016 module-attribute-recompile: instances of one module class compiled one by one, made
with different int values that ``forward`` reads as ``self.<attr>``.

Sources: PyTorch docs, "torch.compile Troubleshooting" (recompilations: guards on module
attributes; "torch.compile considers integer attributes of the nn.Module to be static";
``recompile_limit``) and "Compiling the model" advice to compile the top-level module. All
instances share one code object (``Block.forward``) and so one cache. Measured on torch 2.13
(docs/compile-target.md): 12 compiled instances with 12 values give 8 graphs, 7 recompilations
and an eager fallback; the same value in every instance, or one compiled parent, give 1 graph.
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import child_nodes, code
from hpulint.rules.base import Rule
from hpulint.rules.compile_specialized import float_set, float_set_findings
from hpulint.rules.compile_grown_cache import grown_cache
from hpulint.rules.compile_grown_containers import GrownContainers
from hpulint.rules.compile_hook_growth import added_hook, hook_growth
from hpulint.rules.compile_grown_modules import grown_modules
from hpulint.rules.compile_pruning import repeated_pruning
from hpulint.rules.compile_class_swaps import class_swaps
from hpulint.rules.compile_str_attrs import str_attr_cycles
from hpulint.rules.compile_weight_dtypes import weight_dtypes
from hpulint.rules.compile_widened_layers import widened_layers
from hpulint.rules.compile_instances import per_instance_compiles
from hpulint.rules.compile_step_attrs import OuterCounters
from hpulint.rules.compile_state import (bump_message, read_as_number, bumped_attribute, grad_toggle, hook_bumps, int_step,
                                         helper_call_toggles, helper_toggle, is_self_attr, literal_kind, registered_hook,
                                         toggle_kind, unfreeze_findings)
from hpulint.rules.compiled_region import (MANY, _bounded, bound_name, bounded_iter, compiled_why, counter_values,
                                           counters_here, int_of_counters, is_compile_call, names_in, not_traced,
                                           recompile_limit, recompiles_text, where)

MESSAGE = (
    "`self.{attr}` is read in {cls}.forward(), which is compiled per instance ({how}) for "
    "instances made with different `{param}` values ({made}): torch.compile treats int attributes "
    "of an nn.Module as static and all instances share one code object, so each new value is a "
    "recompile, and after `recompile_limit` (8) Dynamo runs forward eagerly for the rest of the "
    "run (eager fallback). Compile the parent module once (Dynamo inlines every child with its "
    "own values: one graph), or keep the value in a tensor buffer"
)


SET = (
    "The compiled `{compiled}` runs {cls}.forward(), which reads `self.{attr}`, and `{target} = {value}` "
    "in the loop sets it to an int that changes between its calls ({how}): torch.compile treats int "
    "attributes of an nn.Module as static (a guard on the value, never made dynamic), so "
    "{values}. Keep the value in a tensor buffer, or pass it as an argument (an int argument is "
    "made dynamic after one recompile)"
)


class ModuleAttributeRecompile(Rule):
    code = "HPU016"
    name = "module-attribute-recompile"
    summary = ("an int attribute that forward reads differs between compiled instances, is set from a "
               "loop counter between calls of the compiled module, or is bumped inside the compiled region (also "
               "by a forward hook the compiled module runs); "
               "requires_grad changed on a part picked by a loop counter between calls; a dropout rate (or a float "
               "attribute forward gives to an op that takes it as a number) set from a loop counter between calls; "
               "a step counter of another object bumped by the loop, read in the compiled region; an int attribute "
               "grown on demand in the compiled region (if n > self.max_len: ...); instances of one class built with 3 or more "
               "different structures, each compiled on its own; a forward hook added on every pass of a loop, never removed; "
               "a compiled module pruned again (torch.nn.utils.prune) on every pass of a loop, its ModuleList/Sequential/"
               "ModuleDict grown, its weights converted to 3 or more dtypes, a layer replaced by a larger one, modules "
               "switched to 2 or more classes with __class__ =, or a str attribute forward reads set to 3 or more "
               "values by a setter between calls")
    triggers = ("compile",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.comp_targets: list = []  # stack of (names, iter node) of enclosing comprehensions
        self.attrs: dict = {}  # class name -> {attr: __init__ parameter}
        self.params: dict = {}  # class name -> __init__ parameters after self
        self.reads: dict = {}  # (class name, attr) -> first Attribute node read in forward
        self.made: list = []  # (class name, Call, {arg position or keyword: varying counter})
        self.per_instance: list = []  # (class name or value, how, classes the loop's iterable builds)
        self.limit = recompile_limit(ctx.source)
        self.built: dict = {}  # name -> names called in the expression last assigned to it
        self.sets: list = []  # (Assign, instance name, attr, loop, counters): `net.depth = epoch + 1` in a loop
        self.compiled_of: dict = {}  # name called -> the instance it compiles (`cnet = torch.compile(net)`)
        self.loop_calls: list = []  # (callee code, loop, call)
        self.made_of: dict = {}  # name -> names in the expression last assigned to it
        self.toggles: list = []  # (statement or call, receiver, loop, counters): requires_grad changed in a loop
        self.named_calls: list = []  # (call, name, loop, counters): a function called by name in a loop
        self.helpers: dict = {}  # module-level function -> [(params, owners, pickers, kind, toggle)] (compile_state)
        self.literals: dict = {}  # (class name, attr) -> kinds of the values `self.<attr> = ...` sets
        self.hooks: list = []  # (hook name, kind, registering class): `register_forward_pre_hook(f)` in a method
        self.int_attrs: set = set()  # attribute names some `x.<attr> = <int>` sets
        self.defs: dict = {}  # function name -> FunctionDef (module level and methods)
        self.classes: dict = {}  # class name -> ClassDef
        self.float_sets: list = []  # (Assign, target, isinstance Dropout, loop, counters): `m.p = f(epoch)`
        self.outer = OuterCounters()  # step counters of another object, bumped in the loop (compile_step_attrs)
        self.containers = GrownContainers()  # a dict or list forward reads the length of, grown per pass
        self.decorated: set = set()  # functions decorated with torch.compile
        self.inst_comps: list = []  # stack of (target names, iter) of enclosing comprehensions, dict ones too
        self.inst_sites: list = []  # (compile call, iterable): a compile of a comprehension's or loop's target
        self.module = None
        self.added_hooks: list = []  # (call, receiver, loop, function name): hooks added, handle dropped

    # comprehensions: their targets vary like loop counters
    def _enter_comp(self, node) -> None:
        names, it = set(), None
        f = node.for_in
        while f is not None:
            names |= set(names_in(f.target))
            it = f.iter if it is None else it
            f = f.inner_for_in
        self.comp_targets.append((names, it))
        self._enter_dict_comp(node)

    def _leave_comp(self, node) -> None:
        self.comp_targets.pop()
        self.inst_comps.pop()

    def _enter_dict_comp(self, node) -> None:
        f = node.for_in
        self.inst_comps.append((set(names_in(f.target)) if f.inner_for_in is None else set(), f.iter))

    def _leave_dict_comp(self, node) -> None:
        self.inst_comps.pop()

    visit_ListComp = visit_GeneratorExp = visit_SetComp = _enter_comp
    leave_ListComp = leave_GeneratorExp = leave_SetComp = _leave_comp
    visit_DictComp = _enter_dict_comp
    leave_DictComp = _leave_dict_comp

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def _instance_site(self, node: cst.Call, target: cst.BaseExpression) -> None:
        """`torch.compile(head)` / `head.compile()` where `head` is the target of the innermost
        comprehension or `for` around it (compile_instances)."""
        if type(target) is not cst.Name:
            return
        if self.inst_comps:
            names, it = self.inst_comps[-1]
            if target.value in names:
                self.inst_sites.append((node, it))
            return
        loop = self.an.loop
        if loop is not None and type(loop.node) is cst.For and target.value in set(names_in(loop.node.target)):
            self.inst_sites.append((node, loop.node.iter))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.setdefault(node.name.value, node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.defs.setdefault(node.name.value, node)
        if any(is_compile_call(self.an, d.decorator) or (self.an.qualname(d.decorator) or "") == "torch.compile"
               for d in node.decorators):
            self.decorated.add(node.name.value)
        cls = self.an.current_class
        if cls is not None and node.name.value == "__init__":
            self.params[cls.name] = [p.name.value for p in node.params.params][1:]

    def visit_If(self, node: cst.If) -> None:
        """`if seq_len > self.max_seq_len_cached: <grow the cache>` in the region (compile_grown_cache)."""
        an = self.an
        cls = an.current_class
        hit = grown_cache(an, node, self.classes.get(cls.name) if cls is not None else None, self.limit,
                          self.code)
        if hit is not None:
            self.report(hit[0], "{why}", when=hit[1])

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bump(node)
        self.outer.bump(self.an, node)

    def _bump(self, node) -> None:
        """`self.seen += 1` inside the compiled region (compile_state)."""
        an = self.an
        fn = an.function
        target = bumped_attribute(node)
        if target is None or fn.kind != "function" or fn.name == "__init__" or not_traced(an) \
                or not is_self_attr(target) or an.current_class is None or not int_step(node):
            return
        v, owner = an.value(target), an.value(target.value)
        key = (an.current_class.name, target.attr.value)
        cls_node = an.current_class.node

        def when():
            why = compiled_why(an, fn)
            # an int (a float is made dynamic after one recompile under the eager backend)
            if why is None or an.kind(v) != "scalar" or self.literals.get(key) != {"int"}:
                return None
            if an.kind(owner) != "model" and not read_as_number(cls_node, target.attr.value):
                return None  # (a plain object's int is made dynamic unless a read needs the number)
            return bump_message(node, target, self.limit, where(fn, why), an.kind(owner) == "model")

        self.report(node, "{why}", when=when)

    def visit_Assign(self, node: cst.Assign) -> None:
        an = self.an
        self._bump(node)
        self.outer.bump(an, node)
        self.containers.assign(an, node)
        if len(node.targets) == 1 and type(node.targets[0].target) is cst.Attribute and literal_kind(node.value) == "int":
            self.int_attrs.add(node.targets[0].target.attr.value)
        if an.current_class is not None and len(node.targets) == 1 and is_self_attr(node.targets[0].target):
            key = (an.current_class.name, node.targets[0].target.attr.value)
            if bumped_attribute(node) is None:
                self.literals.setdefault(key, set()).add(literal_kind(_int_default(an, node.value) or node.value))
        recv = grad_toggle(node)
        if recv is not None and an.loop is not None:
            self.toggles.append((node, recv, an.loop, counters_here(an)))
        if recv is not None:
            self._helper_toggle(node, recv)
        read = None  # the names the value reads (found once for all the targets)
        for t in node.targets:
            if type(t.target) is cst.Name:
                if read is None:
                    read = list(names_in(node.value))
                self.made_of[t.target.value] = set(read)
                made = _called_names(node.value)
                for ref in read:
                    made |= self.built.get(ref, set())
                self.built[t.target.value] = made
        if an.loop is not None and len(node.targets) == 1:
            tgt = node.targets[0].target
            counters = counters_here(an)
            if type(tgt) is cst.Attribute and type(tgt.value) is cst.Name and tgt.value.value != "self" \
                    and int_of_counters(node.value, counters):
                self.sets.append((node, tgt.value.value, tgt.attr.value, an.loop, counters))
            hit = float_set(node, an) if any(n in counters for n in names_in(node.value)) else None
            if hit is not None:
                self.float_sets.append((node, *hit, an.loop, counters))
        cls = an.current_class
        if cls is None or an.function.name != "__init__":
            return
        params = set(self.params.get(cls.name, ()))
        for t in node.targets:
            tgt = t.target
            if type(tgt) is cst.Attribute and type(tgt.value) is cst.Name and tgt.value.value == "self":
                used = [n for n in names_in(node.value) if n in params]
                if used and type(node.value) is not cst.Call:  # a submodule built from it is not an int
                    self.attrs.setdefault(cls.name, {})[tgt.attr.value] = used[0]

    def visit_Attribute(self, node: cst.Attribute) -> None:
        an = self.an
        self.outer.read(an, node)
        cls = an.current_class
        if cls is None or an.function.name != "forward":
            return
        if type(node.value) is cst.Name and node.value.value == "self":
            self.reads.setdefault((cls.name, node.attr.value), node)

    def visit_Call(self, node: cst.Call) -> None:
        an = self.an
        self.containers.call(an, node)
        receiver = added_hook(an, node)
        if receiver is not None:
            fn = an.function
            self.added_hooks.append((node, receiver, an.loop, fn.name if fn.kind == "function" else None))
        hook = registered_hook(node)
        if hook is not None and an.current_class is not None:
            self.hooks.append(hook + (an.current_class.name,))
        if an.loop is not None and type(node.func) in (cst.Name, cst.Attribute):
            self.loop_calls.append((code(node.func), an.loop, node))
            if type(node.func) is cst.Name:
                self.named_calls.append((node, node.func.value, an.loop, counters_here(an)))
            recv = grad_toggle(node)
            if recv is not None:
                self.toggles.append((node, recv, an.loop, counters_here(an)))
        recv = grad_toggle(node)
        if recv is not None:
            self._helper_toggle(node, recv)
        if is_compile_call(an, node) and node.args:
            self._instance_site(node, node.args[0].value)
        elif type(node.func) is cst.Attribute and node.func.attr.value == "compile" and not node.args:
            self._instance_site(node, node.func.value)
        if is_compile_call(an, node) and node.args and type(node.args[0].value) is cst.Name:
            name = bound_name(an, node)
            if name is not None:
                self.compiled_of[name] = node.args[0].value.value
        elif type(node.func) is cst.Attribute and node.func.attr.value == "compile" and not node.args \
                and type(node.func.value) is cst.Name:
            self.compiled_of[node.func.value.value] = node.func.value.value
        varying = self._varying_names()
        if type(node.func) is cst.Name and node.args:
            vary = {}
            for k, a in enumerate(node.args):
                hit = [n for n in names_in(a.value) if n in varying]
                if hit:
                    vary[a.keyword.value if a.keyword is not None else k] = hit[0]
            if vary:
                self.made.append((node.func.value, node, vary))
        if not (varying or an.loop is not None):
            return
        if is_compile_call(an, node) and node.args:
            target = node.args[0].value
            if type(target) is cst.Call and type(target.func) is cst.Name:
                self.per_instance.append((target.func.value, f"`{code(node.func)}({code(target.func)}(...))` in a loop",
                                          set()))
            else:
                self.per_instance.append((an.value(target), f"`{code(node.func)}({code(target)})` in a loop",
                                          self._iterated_classes(target)))
        elif type(node.func) is cst.Attribute and node.func.attr.value == "compile" and not node.args:
            self.per_instance.append((an.value(node.func.value), f"`{code(node.func)}()` in a loop",
                                      self._iterated_classes(node.func.value)))

    def _iterated_classes(self, target: cst.BaseExpression) -> set:
        """`for layer in layers: layer.compile()`: the names called where `layers` was built."""
        loop = self.an.loop
        if loop is None or type(target) is not cst.Name or type(loop.node) is not cst.For \
                or target.value not in names_in(loop.node.target):
            return set()
        out = _called_names(loop.node.iter)
        for n in names_in(loop.node.iter):
            if n in self.built:
                out |= self.built[n]
        return out

    def _varying_names(self) -> set:
        """Comprehension targets and loop counters here whose loop may take more values than the
        recompile limit."""
        out = set()
        for names, it in self.comp_targets:
            if it is None or not bounded_iter(it, self.limit):
                out |= names
        for name, origin in counters_here(self.an).items():
            if not isinstance(origin, str) and not _bounded(origin, self.limit):
                out.add(name)
        return out

    def _helper_toggle(self, node, recv) -> None:
        """A toggle in a module-level function on a part of a module parameter that another
        parameter picks (compile_state.helper_toggle)."""
        fn = self.an.function
        if fn.kind != "function" or fn.cls is not None or fn.parent is None or fn.parent.kind != "module":
            return
        params = list(fn.params)
        hit = helper_toggle(recv, self.an.loop, self.made_of, params)
        if hit is not None:
            self.helpers.setdefault(fn.name, []).append((params, hit[0], hit[1], toggle_kind(node), node))

    def finish(self) -> None:
        self._sets()
        for call, message in float_set_findings(self, self.float_sets, self.classes):
            self.report(call, message)
        compiled = set(self.compiled_of) | self.decorated
        for node, when in self.outer.findings(self.int_attrs, self.loop_calls, compiled, self.limit):
            self.report(node, "{why}", when=when)
        for node, target, when in hook_bumps(self.an, self.hooks, self.defs, self.int_attrs, self.limit):
            self.report(node, "{why}", when=when)
        toggles = self.toggles + helper_call_toggles(self.named_calls, self.helpers)
        for call, message, _ in unfreeze_findings(toggles, self.loop_calls, self.compiled_of, self.made_of,
                                                  self.limit):
            self.report(call, message)
        an = self.an
        done = set()
        todo = []
        for target, how, iterated in self.per_instance:
            if isinstance(target, str):
                todo.append((target, how))
                continue
            ref = an.resolve(target).ref or ""
            if ref:
                todo.append((ref.rsplit(":", 1)[-1].rsplit(".", 1)[-1], how))
            else:
                todo += [(c, how) for c in sorted(iterated) if c in self.params]
        for cls, how in todo:
            if cls in done:
                continue
            attrs = self.attrs.get(cls, {})
            params = self.params.get(cls, [])
            for name, call, vary in self.made:
                if name != cls:
                    continue
                for key, counter in vary.items():
                    param = params[key] if isinstance(key, int) and key < len(params) else key
                    attr = next((a for a, p in attrs.items() if p == param and (cls, a) in self.reads), None)
                    if attr is None:
                        continue
                    done.add(cls)
                    self.report(self.reads[(cls, attr)], MESSAGE.format(
                        attr=attr, cls=cls, how=how, param=param, made=f"`{code(call)}` for each `{counter}`"))
                    break
                if cls in done:
                    break
        for call, message in self.containers.findings(self.built, self.loop_calls, self.compiled_of, self.limit,
                                                         self.reads):
            self.report(call, message)  # a dict or list grown between calls, its length read (compile_grown_containers)
        for call, message in hook_growth(self.added_hooks, self.loop_calls, self.compiled_of, self.limit):
            self.report(call, message)  # a hook added per pass, never removed (compile_hook_growth)
        for call, message in repeated_pruning(self.an, self.module, self.compiled_of):
            self.report(call, message)  # a compiled module pruned again every pass (compile_pruning)
        for node, message in (class_swaps(self.module, self.compiled_of) if "__class__" in self.ctx.source else []) + \
                str_attr_cycles(self.module, self.compiled_of, self.limit):
            self.report(node, message)  # `m.__class__ = cls`, a str attribute set per pass (compile_class_swaps/str_attrs)
        for call, message in grown_modules(self.an, self.module, self.compiled_of) + \
                weight_dtypes(self.an, self.module, self.compiled_of, self.limit) + \
                widened_layers(self.an, self.module, self.compiled_of):
            self.report(call, message)  # a ModuleList grown, weights converted, a layer widened per pass (compile_grown_modules/...)
        if not done:
            for call, message in per_instance_compiles(self.module, self.inst_sites, self.limit):
                self.report(call, message)  # instances of different structures (compile_instances)


    def _sets(self) -> None:
        """`net.active = epoch + 1` in a loop around calls of the compiled `net`."""
        for node, inst, attr, loop, counters in self.sets:
            cls = next((c for c in sorted(self.built.get(inst, ())) if (c, attr) in self.reads), None)
            if cls is None:
                continue
            calls = [(callee, call) for callee, where, call in self.loop_calls
                     if self.compiled_of.get(callee) == inst and any(lp is loop for lp in where.chain())]
            if not calls:
                continue
            used = {n for n in names_in(node.value) if n in counters}
            n = counter_values(counters, used)
            if n is not None and n - 1 >= self.limit:
                n = None
            if n is not None and n < MANY:
                continue
            loops = [counters[u] for u in sorted(used)]
            how = ", ".join(f"`{code(lp.node.target)}` in `{code(lp.node.iter)}`" if type(lp.node) is cst.For
                            else "a `while` loop" for lp in loops)
            values = recompiles_text(n, self.limit) if n is not None else \
                ("each new value is a recompile, and after `recompile_limit` (8) Dynamo runs forward eagerly "
                 "for the rest of the run (eager fallback)")
            if n is not None:
                values = "it takes " + values
            # at the call: the guard itself may fail inside torch (`self.blocks[: self.depth]`)
            self.report(calls[0][1], SET.format(target=f"{inst}.{attr}", value=code(node.value), cls=cls, attr=attr,
                                                compiled=calls[0][0],
                                                how=how, values=values))


def _int_default(an, value: cst.BaseExpression):
    """The default of the parameter ``value`` names, when it is an int literal (`updates=0` in
    `def __init__(self, model, updates=0): self.updates = updates`), else None."""
    fn = an.function.node
    if type(value) is not cst.Name or type(fn) is not cst.FunctionDef:
        return None
    p = next((p for p in (*fn.params.params, *fn.params.kwonly_params) if p.name.value == value.value), None)
    return p.default if p is not None and type(p.default) is cst.Integer else None


def _called_names(node: cst.CSTNode) -> set:
    """Names called anywhere in an expression (`nn.ModuleList(Layer(i) for i in ...)` -> Layer)."""
    out = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Call and type(n.func) is cst.Name:
            out.add(n.func.value)
        stack += child_nodes(n)
    return out
