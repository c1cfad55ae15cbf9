"""HPU015 static-shapes-recompile: ``torch.compile(..., dynamic=False)`` or
``torch._dynamo.mark_static`` on inputs whose size changes from call to call.

Sources: PyTorch docs, "Dynamic Shapes" (automatic dynamic shapes: by default the second size
seen makes the dimension symbolic; ``dynamic=False`` and ``mark_static`` turn that off;
``torch._dynamo.mark_dynamic`` marks a dimension dynamic up front) and "torch.compile
Troubleshooting" (``recompile_limit``, 8: then the frame runs eagerly). Measured on torch 2.13
(docs/compile-target.md): twelve sizes give 2 graphs by default, 8 graphs, 7 recompilations and
an eager fallback with ``dynamic=False`` or ``mark_static``, 1 graph with ``mark_dynamic``.
"""
from __future__ import annotations

import re

import libcst as cst

from hpulint.analysis.syntax import code, keyword
from hpulint.model import SAFE, UNSAFE, Fix
from hpulint.rules.compile_feedback import grows_through_output
from hpulint.rules.compile_dynamic_branch import compared, compiled_def, size_branches
from hpulint.rules.compile_modulo_branch import module_ints
from hpulint.rules.compile_size_modulo import modulo_branches, size_modulo_test, sized_index
from hpulint.rules.compile_grown_cache import grown_cache
from hpulint.rules.compile_layouts import input_layouts, layouts_message
from hpulint.rules.compile_batch_of_one import batch_of_one
from hpulint.rules.compile_batch_sizes import (PADDED, calls_with_bindings, marked_parameter, padded_to_longest,
                                               size_values)
from hpulint.rules.compile_reach import compile_partial
from hpulint.rules.compile_shape_windows import MESSAGE as WINDOW, shape_window, sizes_vary
from hpulint.rules.compile_size_specializers import (
    message as specialized_message, range_bound, set_membership, size_specializer, sizes_change,
)
from hpulint.rules.compile_tensor_loops import looped_sizes
from hpulint.rules.compile_forms import (FORMS, SIZE_KEY, built_from, called_names, dict_names, forms_text,
                                         input_forms, size_key)
from hpulint.rules.compiled_region import (MANY, LoopCalls, bound_name, compiled_why, counter_values, is_compile_call,
                                           names_in, recompiles_text)

MESSAGE = (
    "{how}, but {name} is called in a loop with {what} that changes every pass (`{arg}`): Dynamo "
    "compiles a new graph for every new size (a recompile each time), and after `recompile_limit` "
    "(8) it stops compiling it and runs it eagerly for the rest of the run (eager fallback), with "
    "one warning. {fix}"
)
COUNTED = "{how}, but {name} is called in a loop with {what} that takes {values} (`{arg}`). {fix}"
FIX_FALSE = ("Remove `dynamic=False` (by default the first change makes the size dynamic: one "
             "recompile), or call `torch._dynamo.mark_dynamic(x, dim)` on the varying dimension "
             "before the call")
FIX_STATIC = ("Use `torch._dynamo.maybe_mark_dynamic(x, dim)` instead (the size is dynamic from the first "
              "call), or drop the `mark_static` call for a dimension that varies")


class StaticShapesRecompile(LoopCalls):
    code = "HPU015"
    name = "static-shapes-recompile"
    summary = ("dynamic=False / mark_static on a compiled function fed sizes that change every call, take 3 or more "
               "listed values, follow the data (a batch padded to its own longest item) or grow through its own "
               "output fed back (also through a functools.partial of torch.compile, or mark_static in a helper); a "
               "compiled function fed inputs of 3 or more ranks, dtypes or memory layouts; a dict keyed by a size "
               "filled in the compiled region; a buffer re-registered larger in the compiled region when an input is longer; a "
               "branch on the size of an input the loop grows by concatenation; a Python loop over an input whose first "
               "dimension follows a loop counter or a random draw; a batch of one among batches of other sizes; a pooling "
               "window, a bit_length(), a NumPy function or a range() bound computed from the input's size over 3 or more input sizes; a branch on a size modulo a constant fed "
               "sizes on both sides of it")
    triggers = ("dynamic=False", "mark_static", "compile")
    fix_safety = "safe or unsafe"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.static: list = []  # (keyword Arg, compile call, name called)
        self.marks: list = []  # (mark_static call, name, loop, counters)
        self.compiled: dict = {}  # name called -> (compile call or decorator, target expression)
        self.keyed: list = []  # (Assign, function scope, container, key): `cache[k] = ...` in a function
        # every Call and Assign of the file, in source order (for compile_forms' size keys)
        self.every_call: list = []
        self.every_assign: list = []
        self.every_for: list = []
        self.partials: dict = {}  # name -> `functools.partial(torch.compile, ...)` call it is bound to
        self.helper_marks: list = []  # (mark_static call, name, FunctionDef): outside loops, in a function
        self.classes: dict = {}  # class name -> ClassDef (compile_grown_cache)
        self.size_tests: list = []  # (function scope, compared(...)): `if ids.shape[-1] < n:` in a function
        self.windows: list = []  # (pooling call, function scope, window text): a window from a size (compile_shape_windows)
        self.sizes: dict = {}  # id(function scope) -> {name: (tensor, dim)}: `n = x.shape[1]` (compile_size_modulo)
        self.looped: set = set()  # ids of compiled FunctionDefs with a Python-loop finding (compile_tensor_loops)
        self.specialized: list = []  # (node, function scope, (kind, said)): a size made a constant (compile_size_specializers)
        self.modulo_tests: list = []  # (function scope, test, tensor, dim, modulus, check): `if n % 8:` on a size
        self.ints = None  # module-level names bound once to an int literal (compile_modulo_branch)

    def visit_Call(self, node: cst.Call) -> None:
        self.every_call.append(node)
        super().visit_Call(node)
        an = self.an
        window = shape_window(an, node)
        if window is not None:
            self.windows.append((node, an.function, window))
        spec = size_specializer(an, node)
        if spec is not None:
            self.specialized.append((node, an.function, spec))
        qn = an.qualname(node.func) or ""
        if qn.endswith("mark_static") and node.args and type(node.args[0].value) is cst.Name \
                and an.loop is not None:
            self.marks.append((node, node.args[0].value.value, an.loop, self.counters_here()))
            return
        if qn.endswith("mark_static") and node.args and type(node.args[0].value) is cst.Name \
                and an.function.kind == "function" and type(an.function.node) is cst.FunctionDef:
            self.helper_marks.append((node, node.args[0].value.value, an.function.node))
            return
        if is_compile_call(an, node) and node.args:
            name = bound_name(an, node)
            if name is not None:
                self.compiled[name] = (node, node.args[0].value)
        partial = self.partials.get(node.func.value) if type(node.func) is cst.Name else None
        if partial is not None and node.args:  # `encode = compile_static(encode_fn)`
            name = bound_name(an, node)
            arg = _static_kw(partial)
            if name is not None:
                self.compiled[name] = (node, node.args[0].value)
                if arg is not None:
                    self.static.append((arg, partial, name, node))
            return
        arg = _static_kw(node)
        if arg is None:
            return
        if is_compile_call(an, node):
            name = bound_name(an, node)
            if name is not None:
                self.static.append((arg, node, name, arg))
        elif type(node.func) is cst.Attribute and node.func.attr.value == "compile":
            self.static.append((arg, node, code(node.func.value), arg))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.setdefault(node.name.value, node)

    def visit_If(self, node: cst.If) -> None:
        """`if n > self.table.shape[0]: self.register_buffer("table", ...)` in the region (compile_grown_cache)."""
        an = self.an
        cls = an.current_class
        hit = grown_cache(an, node, self.classes.get(cls.name) if cls is not None else None, self.limit, self.code)
        if hit is not None:
            self.report(hit[0], "{why}", when=hit[1])
        test = compared(an, node)
        if test is not None and test[3] == "size":  # `if ids.shape[-1] < n:` (compile_dynamic_branch)
            self.size_tests.append((an.function, test))
        spec = set_membership(an, node.test, self.module)
        if spec is not None:  # `if n in TUNED_LENGTHS:` (compile_size_specializers)
            self.specialized.append((node.test, an.function, spec))
        fn = an.function
        if fn.kind == "function":  # `if n % BLOCK:` on a size (compile_size_modulo)
            if self.ints is None:
                self.ints = module_ints(self.module)
            hit = size_modulo_test(node.test, self.sizes.get(id(fn), {}), set(fn.params or ()), self.ints)
            if hit is not None:
                self.modulo_tests.append((fn, node.test) + hit)

    def visit_For(self, node: cst.For) -> None:
        self.every_for.append(node)
        spec = range_bound(self.an, node)
        if spec is not None:
            self.specialized.append((node.iter, self.an.function, spec))

    def visit_Assign(self, node: cst.Assign) -> None:
        self.every_assign.append(node)
        super().visit_Assign(node)
        if self.an.function.kind == "module" and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name \
                and compile_partial(self.an, node.value):
            self.partials[node.targets[0].target.value] = node.value
        fn = self.an.function
        if fn.kind == "function" and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
            sized = sized_index(node.value)
            if sized is not None:
                self.sizes.setdefault(id(fn), {})[node.targets[0].target.value] = sized
        if fn.kind == "function" and len(node.targets) == 1 and type(node.targets[0].target) is cst.Subscript:
            t = node.targets[0].target
            if type(t.value) in (cst.Name, cst.Attribute) and len(t.slice) == 1 and type(t.slice[0].slice) is cst.Index:
                self.keyed.append((node, fn, t.value, t.slice[0].slice.value))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for d in node.decorators:
            dec = d.decorator.func if type(d.decorator) is cst.Call else d.decorator
            if (self.an.qualname(dec) or "") == "torch.compile":
                self.compiled.setdefault(node.name.value, (d.decorator, node.name))
        for d in node.decorators:
            call = d.decorator
            if type(call) is cst.Call and is_compile_call(self.an, call):
                arg = _static_kw(call)
                if arg is not None:
                    self.static.append((arg, call, node.name.value, arg))
            elif type(call) is cst.Name and call.value in self.partials:  # `@compile_static`
                partial = self.partials[call.value]
                self.compiled.setdefault(node.name.value, (call, node.name))
                arg = _static_kw(partial)
                if arg is not None:
                    self.static.append((arg, partial, node.name.value, call))

    def finish(self) -> None:
        for node, when in size_branches(self) + modulo_branches(self):
            self.report(node, "{why}", when=when)
        self._tensor_loops()
        for call, msg in batch_of_one(self):  # a batch of one among other sizes (compile_batch_of_one)
            self.report(call, msg)
        self._forms()
        looped = [(c, callee, loop) for c, callee, loop, _ in self.calls]
        for callee, layouts in input_layouts(self.module, set(self.compiled), looped, self.value_in_loop,
                                             self.every_call):  # inputs of 3 or more layouts (compile_layouts)
            self.report(self.compiled[callee][0], layouts_message(callee, layouts, self.limit))
        self._helper_marks()
        self._size_keys()
        self._shape_windows()
        for arg, call, name, at in self.static:
            hit = self._varying_call(name)
            if hit is not None:
                what, text, n = hit
                how = "`dynamic=False` turns off dynamic shapes"
                if at is not arg:  # a functools.partial of torch.compile, used here
                    how = f"`{code(at.func) if type(at) is cst.Call else code(at)}` is `{code(call)}`, and " + how
                msg = MESSAGE.format(how=how, name=f"`{name}`", what=what, arg=text, fix=FIX_FALSE) if n is None \
                    else COUNTED.format(how=how, name=f"`{name}`", what=what, values=recompiles_text(n, self.limit),
                                        arg=text, fix=FIX_FALSE)
                self.report(at, msg, fix=_remove_kw_fix(call, arg))
        for node, name, loop, counters in self.marks:
            if (id(loop), name) in self.dynamic_marked:
                continue
            shape = self.shape_counters(cst.Name(name), loop, counters)
            varying = self.unbounded(shape, counters)
            how = f"`mark_static` keeps the size of `{name}` static"
            if varying:
                msg = MESSAGE.format(how=how, name="the compiled function", what="a size",
                                     arg=", ".join(sorted(varying)), fix=FIX_STATIC)
            else:
                n = counter_values(counters, shape) if shape else None
                if n is None or n < MANY:
                    continue
                msg = COUNTED.format(how=how, name="the compiled function", what="a size",
                                     values=recompiles_text(n, self.limit), arg=", ".join(sorted(shape)), fix=FIX_STATIC)
            self.report(node, msg, fix=_dynamic_mark_fix(node, self.ctx.source))

    def _tensor_loops(self) -> None:
        """A compiled function that loops in Python over a tensor whose first dimension changes
        from pass to pass (compile_tensor_loops)."""
        done = set()
        for call, callee, loop, counters in self.calls:
            if callee not in self.compiled or callee in done:
                continue
            fn, skip = compiled_def(self, callee)
            target = self.compiled[callee][1]
            if fn is None and type(target) is cst.Name:  # `loss_fn = torch.compile(batch_hard_triplet)`
                fn, skip = compiled_def(self, target.value)
            msg = looped_sizes(self, self.an, call, callee, loop, counters, fn, skip)
            if msg is not None:
                done.add(callee)
                self.looped.add(id(fn))  # its loop is this finding, not a range bound's (compile_size_specializers)
                self.report(call, msg)

    def _helper_marks(self) -> None:
        """`mark_static(batch, 0)` in a helper on a tensor made from its parameter, the helper called
        in a loop with sizes that change (compile_batch_sizes)."""
        for node, name, fn in self.helper_marks:
            made = marked_parameter(self.an, fn, name)
            if made is None:
                continue
            param, how = made
            params = [p.name.value for p in fn.params.params]
            k = params.index(param)
            for call, bound in calls_with_bindings(self.module, fn.name.value):
                positional = [a.value for a in call.args if a.keyword is None and not a.star]
                arg = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == param),
                           positional[k] if k < len(positional) else None)
                got = size_values(self.module, arg, bound) if arg is not None else None
                if got is None or got[1] is not None and got[1] < MANY:
                    continue
                said = f"`mark_static` keeps the size of `{name}` static" + \
                    (f" (`{name}` is `{how}({param})`)" if how else "")
                text = f"{code(arg)}`, one size per `{', '.join(sorted(got[0]))}"
                msg = MESSAGE.format(how=said, name=f"`{fn.name.value}`", what="a size", arg=text, fix=FIX_STATIC) \
                    if got[1] is None else \
                    COUNTED.format(how=said, name=f"`{fn.name.value}`", what="a size",
                                   values=recompiles_text(got[1], self.limit), arg=text, fix=FIX_STATIC)
                self.report(node, msg, fix=_dynamic_mark_fix(node, self.ctx.source))
                break

    def _forms(self) -> None:
        """A compiled callable fed tensors of 3 or more ranks or dtypes (compile_forms)."""
        for callee, call, forms in input_forms(self.module, set(self.compiled), self.every_call, self.every_for):
            what, said = forms_text(forms)
            # at the compile call: each form's first call recompiles, from its own line
            self.report(self.compiled[callee][0], FORMS.format(name=callee, n=len(forms), what=what, said=said,
                                           values=recompiles_text(len(forms), self.limit, "forms")))

    def _size_keys(self) -> None:
        """`cache[T] = ...` on a dict, keyed by a size, in the compiled region (compile_forms)."""
        if not self.keyed:
            return
        dicts = dict_names(self.every_assign)
        built = built_from(self.every_assign)
        for node, fn, container, key in self.keyed:
            leaf = container.attr.value if type(container) is cst.Attribute else container.value
            if leaf not in dicts or type(fn.node) is not cst.FunctionDef or not size_key(self.every_call, fn.node, key):
                continue
            cls = fn.cls.name if fn.cls is not None else None
            site = None
            for name, (at, target) in self.compiled.items():
                made = called_names(target) | {c for n in names_in(target) for c in built.get(n, ())}
                if cls is not None and cls in made or cls is None and len(self.compiled) == 1:
                    site = (name, at)
                    break
            if site is None or not self._sizes_vary(site[0]):
                continue  # one size: the fill and the hit, one recompile (measured)
            name, at = site
            stmt = code(node).strip().splitlines()[0]
            msg = SIZE_KEY.format(name=name, fn=fn.name, cache=code(container), stmt=stmt, limit=self.limit)
            self.report(at, "{why}", when=lambda fn=fn, msg=msg: msg if compiled_why(self.an, fn) else None)
            return

    def _shape_windows(self) -> None:
        """A pooling window computed from an input's size (compile_shape_windows), or a size made a
        Python constant (compile_size_specializers), in a region fed sizes that vary."""
        varying = next((name for name in self.compiled if self._sizes_vary(name) or sizes_vary(self, self.module, name)),
                       None) if self.windows or self.specialized else None
        for node, fn, window in self.windows if varying is not None else ():
            msg = WINDOW.format(op=code(node.func), fn=fn.name, arg=window, compiled=varying, limit=self.limit)
            self.report(node, "{why}", when=lambda fn=fn, msg=msg: msg if compiled_why(self.an, fn) else None)
        for node, fn, (kind, said) in self.specialized if varying is not None else ():
            if kind == "range" and id(fn.node) in self.looped:
                continue
            msg = specialized_message(kind, said, fn.name, varying, self.limit)
            self.report(node, "{why}", when=lambda fn=fn, msg=msg: msg if compiled_why(self.an, fn) else None)

    def _sizes_vary(self, name: str) -> bool:
        """``name`` is called in a loop with a size that takes 3 or more values (or more than the limit)."""
        return sizes_change(self, name)

    def _varying_call(self, name: str):
        """(what varies, the argument, how many values or None for more than the limit) for a
        call of ``name`` in a loop whose argument's size or int value follows a loop counter that
        is not marked dynamic, or whose argument is re-bound to what the call returns, grown."""
        counted = None
        for call, callee, loop, counters in self.calls:
            if callee != name:
                continue
            for k, a in enumerate(call.args):
                expr = a.value
                if type(expr) is cst.Name and (id(loop), expr.value) in self.dynamic_marked:
                    continue
                shape = self.shape_counters(expr, loop, counters)
                if self.unbounded(shape, counters):
                    return "a size", code(expr), None
                ints = {n for n in _int_names(expr) if n in counters}
                if self.unbounded(ints, counters):
                    return "an int", code(expr), None
                if padded_to_longest(self.an, self.module, expr, self.value_in_loop, loop):
                    return PADDED, code(expr), None
                grown = grows_through_output(self, call, k, loop)
                if grown is not None:
                    return grown
                for kind, names in (("a size", shape), ("an int", ints)):
                    n = counter_values(counters, names) if names else None
                    if n is not None and n >= MANY and (counted is None or n > counted[2]):
                        counted = (kind, code(expr), n)
        return counted


_BACKEND = re.compile(r"backend\s*=\s*(?:\"|')([\w.-]+)")
DEFAULT_BACKENDS = ("inductor", "eager", "aot_eager")  # they compile dynamic shapes


def _dynamic_mark_fix(call: cst.Call, source: str):
    """`mark_static(x, dim)` -> `maybe_mark_dynamic(x, dim)`: the dimension is dynamic from the
    first call. Not `mark_dynamic`: that one raises ("Constraints violated") when the function
    specializes the dimension; `maybe_mark_dynamic` then just specializes it (measured on 2.13).
    Safe where every backend named in the file compiles dynamic shapes (the default ones);
    elsewhere (hpu_backend, openxla, a custom backend) static shapes may be the point."""
    positional = [a for a in call.args if a.keyword is None]
    dims = [a for a in call.args if a.keyword is not None and a.keyword.value == "index"]
    if len(positional) + len(dims) < 2:
        return None  # mark_static(x): every dimension; which one varies is the user's call
    func = call.func
    imports = ()
    if type(func) is cst.Attribute:
        new = func.with_changes(attr=cst.Name("maybe_mark_dynamic"))
    elif type(func) is cst.Name:
        new, imports = cst.Name("maybe_mark_dynamic"), ("from torch._dynamo import maybe_mark_dynamic",)
    else:
        return None
    backends = set(_BACKEND.findall(source))
    safe = backends <= set(DEFAULT_BACKENDS)
    return Fix(SAFE if safe else UNSAFE, "mark_static -> torch._dynamo.maybe_mark_dynamic (the size is dynamic "
               "from the first call)", {call: call.with_changes(func=new)}, imports)


def _static_kw(call: cst.Call):
    v = keyword(call, "dynamic")
    if type(v) is cst.Name and v.value == "False":
        return next(a for a in call.args if a.keyword is not None and a.keyword.value == "dynamic")
    return None


def _int_names(expr: cst.BaseExpression) -> list:
    """Names an int argument is made of (`step`, `step + 1`)."""
    if type(expr) is cst.Name:
        return [expr.value]
    if type(expr) is cst.BinaryOperation:
        return _int_names(expr.left) + _int_names(expr.right)
    return []


def _remove_kw_fix(call: cst.Call, arg: cst.Arg) -> Fix:
    args = [a for a in call.args if a is not arg]
    last = call.args[-1]
    if args and last is arg:
        args[-1] = args[-1].with_changes(comma=arg.comma if type(arg.comma) is cst.Comma
                                         and "\n" in code(arg.comma) else cst.MaybeSentinel.DEFAULT)
    backend = keyword(call, "backend")
    name = backend.value.strip("'\"") if type(backend) is cst.SimpleString else None
    # the default backends compile dynamic shapes; others (hpu_backend, openxla, a custom one)
    # may not, so there the fix is the user's call
    safe = backend is None or name in DEFAULT_BACKENDS
    return Fix(SAFE if safe else UNSAFE, "remove dynamic=False (Dynamo makes a size dynamic once it changes)",
               {call: call.with_changes(args=args)})
