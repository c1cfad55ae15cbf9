"""HPU001 loop-iterator-constant: a loop counter baked into the graph as a constant.

Source: Gaudi docs, "Avoiding Constant Variables in Loops": ``steps[i]`` creates a
different constant operator in the graph each pass, so each pass compiles a new graph; the
Gaudi V-Diffusion model reads ``steps[0]`` and rolls the buffer instead.
"""
from __future__ import annotations


import libcst as cst

from hpulint.analysis.int_arith import is_number_arith
from hpulint.analysis.state import Loop
from hpulint.analysis.syntax import names_in
from hpulint.analysis.values import V_UNKNOWN
from hpulint.rules.base import Rule
from hpulint.rules.loop_constant_fix import fix_later
from hpulint.rules.loop_constant_reads import FILLED, element_of, fill_value, list_of_objects, listed, self_attributes
from hpulint.rules.object_counters import MESSAGE as OBJECT_MESSAGE, ObjectCounters, slice_parts

# torch factories whose positional arguments are sizes
FACTORIES = frozenset(
    f"torch.{n}" for n in ("zeros", "ones", "empty", "full", "rand", "randn", "randint",
                           "arange", "eye", "randperm", "tril_indices", "triu_indices")
)
# tensor methods / torch functions whose integer arguments shape the graph
SHAPING = frozenset(
    {"view", "reshape", "expand", "repeat", "narrow", "select", "roll", "unfold", "transpose",
     "movedim", "new_zeros", "new_ones", "new_empty", "new_full", "unsqueeze", "squeeze",
     "flatten", "split", "chunk", "tensor_split", "tile", "diagonal", "pad"}
)
TIME_KEYWORDS = frozenset({"t", "timestep", "timesteps", "time", "sigma", "sigmas", "noise_level"})
SHAPING_KEYWORDS = frozenset({"dim", "dims", "shifts", "size", "start", "length", "index", "sizes",
                              "shape", "pad", "start_dim", "end_dim", "chunks", "split_size_or_sections"})

MESSAGE = (
    "loop counter `{name}` becomes a constant in the graph ({where}): every pass records a "
    "different graph, so the device compiles again on every iteration ({why}). Keep the value "
    "on the device: read a fixed position and `torch.roll` the buffer each pass, or index with "
    "a device tensor"
)


# the counter of an outer loop read inside a step loop nested in it (a block loop around the
# block's decoding loop): the same constant for the inner passes, a new one each outer pass
OUTER_MESSAGE = (
    "loop counter `{name}` becomes a constant in the graph ({where}): it is the same in every pass "
    "of the inner step loop, but each pass of its own loop records different graphs, so the device "
    "compiles them again for every pass of the outer loop ({why}). Keep the value on the device "
    "(index with a device tensor, or mask a fixed-size window), or pad to one shape for all passes"
)


ATTR_MESSAGE = (
    "`{name}` counts calls and becomes a constant in the graph ({where}): every call "
    "records a different graph, so the device compiles again every step ({why}). Keep the index on "
    "the device (a device tensor index), or roll the buffer and read a fixed position"
)
CALL_MESSAGE = (
    "loop counter `{name}` is passed into {why}: there it becomes a constant in the graph, so every "
    "pass records a different graph and the device compiles again. Pass it as a device tensor, or "
    "read a fixed position of a buffer rolled each pass"
)


# element-wise methods a Python or NumPy number does not have: the element they are called on
# is a tensor's (`alphabar[i].sqrt()`)
TENSOR_MATH = frozenset({"sqrt", "rsqrt", "exp", "log", "log1p", "expm1", "sigmoid", "reciprocal"})


class LoopIteratorConstant(Rule):
    code = "HPU001"
    name = "loop-iterator-constant"
    summary = "a loop counter used as a tensor index, slice bound, size or dim in a step loop"
    triggers = ("for ", "while ", "def ")
    lazy_mode_only = True
    fix_safety = "unsafe"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.roll_fixes: dict = {}  # id(loop node) -> shared Fix or None
        self.tensor_uses: dict = {}  # id(expr) -> values it is combined with (x * steps[i])
        self.aliases: dict = {}  # (function, name) -> id(subscript) it was assigned (`m = sched[it]`)
        self.alias_bases: dict = {}  # id(subscript) -> the value it reads from, where it is read
        self.objects = ObjectCounters()  # names read from another object's counter

    def _counters_possible(self) -> bool:
        an = self.an
        return an.loop is not None or bool(an.function.pcounters)

    def _uses_possible(self) -> bool:
        """Could an element read here be reported (a counter, or a method's `self.<counter>`)?"""
        return self._counters_possible() or self.an.function.cls is not None

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not self._uses_possible():
            return
        an = self.an
        for a, b in ((node.left, node.right), (node.right, node.left)):
            key = self._use_key(a)
            if key is not None:
                self.tensor_uses.setdefault(key, []).append(an.value(b))

    def visit_Assign(self, node: cst.Assign) -> None:
        """`m = momentum_schedule[it]`: the uses of `m` in the function are the element's uses."""
        fn = self.an.function
        if fn.kind == "function":
            self.objects.note_assign(fn, node)
        if not self._uses_possible():
            return
        for t in node.targets:
            if type(t.target) is cst.Name:
                element = element_of(node.value)
                if element is not None:
                    self.aliases[(id(fn), t.target.value)] = id(element)
                    self.alias_bases[id(element)] = self.an.value(element.value)
                else:
                    self.aliases.pop((id(fn), t.target.value), None)

    def _use_key(self, expr: cst.BaseExpression):
        """The subscript whose element ``expr`` is: itself, or the one its name was assigned;
        through an element-wise method only tensors have (`abar[i].sqrt()`) and arithmetic with
        numbers around it (`(1 - abar[i]).sqrt()`)."""
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in TENSOR_MATH \
                and not expr.args:
            expr = expr.func.value
        if type(expr) is cst.BinaryOperation and (type(expr.left) in (cst.Integer, cst.Float)) \
                is not (type(expr.right) in (cst.Integer, cst.Float)):
            expr = expr.right if type(expr.left) in (cst.Integer, cst.Float) else expr.left
        if type(expr) is cst.Subscript:
            return id(expr)
        if type(expr) is cst.Name and self.aliases:
            return self.aliases.get((id(self.an.function), expr.value))
        if type(expr) in (cst.BinaryOperation, cst.UnaryOperation) and self.aliases and is_number_arith(expr):
            fn = id(self.an.function)  # `(1 - m) * q`
            for n in names_in(expr):
                key = self.aliases.get((fn, n))
                if key is not None:
                    return key
        return None

    def visit_Call(self, node: cst.Call) -> None:
        if self._uses_possible():
            self._subscript_args(node)
            self._tensor_math(node)
            self._factory_attribute(node, self.an.qualname(node.func) or "")
        if not self._counters_possible():
            return
        self._shape_args(node)
        self._into_callee(node)

    def _into_callee(self, node: cst.Call) -> None:
        """`self.p_sample_ddim(x, c, ts, index=index)` with index = total - i - 1: the callee
        indexes a device tensor with it (reported there too, with the loop it comes from)."""
        an = self.an
        site = an.call_sites.get(id(node))
        if site is None or not any(o.startswith("loop:") for o in site.tainted.values()):
            return
        fn = an.function
        here = an.here()
        for key, origin in site.tainted.items():
            if not origin.startswith("loop:"):
                continue
            loop = fn.loops[int(origin[5:])]
            arg = next((a.value for i, a in enumerate(a for a in node.args if not a.star)
                        if (a.keyword is not None and a.keyword.value == key) or (a.keyword is None and i == key)),
                       None)
            hit = an.counter_in(arg) if arg is not None else None
            name = hit[0] if hit else str(key)

            def when(key=key, loop=loop, fid=fn.fid, k=site.index):
                if not loop.is_step_loop or an.device_excluded(here) or an.runs_once(here):
                    return None
                for kind, target, shift in an.facts.ask(("call", fid, k)):
                    info = an.facts.ask(("callee", target)) if kind == "fn" and target else None
                    if info is None:
                        continue
                    params = info["params"]
                    if isinstance(key, str):
                        param = key
                    elif key + shift < len(params):
                        param = params[key + shift]
                    else:
                        continue
                    if param in info["index_params"]:
                        return (f"`{info['name']}()` as `{param}`, which indexes a device tensor with it "
                                f"(the loop {loop.step_reason})")
                return None

            self.report(node, CALL_MESSAGE.format(name=name, why="{why}"), when=when)
            return

    def _tensor_math(self, node: cst.Call) -> None:
        """`((1 - abar[i - 1]) - c1 ** 2).sqrt()`: the elements in the arithmetic a tensor-only
        method is called on are tensors' elements."""
        func = node.func
        if type(func) is not cst.Attribute or func.attr.value not in TENSOR_MATH or node.args:
            return
        todo = [func.value]
        while todo:
            e = todo.pop()
            if type(e) is cst.BinaryOperation:
                todo += [e.left, e.right]
            elif type(e) is cst.UnaryOperation:
                todo.append(e.expression)
            elif type(e) is cst.Subscript:
                self.tensor_uses.setdefault(id(e), []).append(("call", f"torch.Tensor.{func.attr.value}", None))

    def _subscript_args(self, node: cst.Call) -> None:
        """`model(x, steps[i])`, `torch.full(..., alphas[i])`: the element goes where a tensor goes."""
        an = self.an
        qn = an.qualname(node.func) or ""
        if not (qn.startswith("torch.") or type(node.func) in (cst.Name, cst.Attribute)):
            return
        callee = an.value(node.func) if not qn.startswith("torch.") else None
        recv = an.value(node.func.value) if type(node.func) is cst.Attribute and not qn.startswith("torch.") else None
        positional = [a for a in node.args if a.keyword is None and not a.star]
        for a in node.args:
            key = self._use_key(a.value)
            if key is not None:
                if type(a.value) is cst.Subscript or qn.startswith("torch."):
                    # (a name passed to a model may hold a prompt or a path: only the element itself)
                    self.tensor_uses.setdefault(key, []).append(("call", qn, callee))
                elif callee is not None and ((a.keyword is None and a in positional[1:])
                                             or (a.keyword is not None and a.keyword.value in TIME_KEYWORDS)):
                    # `t_next = timesteps[i + 1]; unet(x, t_next, ...)`: a model's conditioning
                    # argument after its input, or its timestep keyword
                    self.tensor_uses.setdefault(key, []).append(("call-name", "", callee))
                if recv is not None:  # `param.mul_(m)`: an argument of a tensor method
                    self.tensor_uses.setdefault(key, []).append(recv)
            elif qn.startswith("torch."):
                # `torch.cat([latents[:, j]] * 2)`, `torch.stack((a[i], b[i]))`: the elements of a
                # list a torch op takes
                for el in listed(a.value):
                    key = self._use_key(el)
                    if key is not None:
                        self.tensor_uses.setdefault(key, []).append(("call", qn, None))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        an = self.an
        self._attribute_counter(node)
        self._object_counter(node)
        if not self._counters_possible():
            return
        for el in node.slice:
            s = el.slice
            parts = [s.value] if type(s) is cst.Index else [p for p in (s.lower, s.upper, s.step) if p is not None]
            for part in parts:
                hit = an.counter_in(part)
                if hit is None:
                    continue
                name, origin = hit
                where = "a slice bound" if type(s) is cst.Slice else "a tensor index"
                base = an.value(node.value)
                index = an.value(part) if type(s) is cst.Index else None
                here = an.here()
                owner = self._module_self(node)

                def what(node=node, base=base, index=index, here=here, owner=owner):
                    if index is not None and an.is_device_tensor(index):
                        return None  # a device tensor index is data
                    if an.is_device_tensor(base):
                        return ""
                    if owner is not None and an.kind(base) == "unknown" and an.is_model(owner):
                        return ""  # (`texts[:, t]` in a module's code: sliced by dimensions, a tensor)
                    if list_of_objects(an.resolve(base)):
                        return None  # one of the tensors a Python list holds: no constant
                    # a host container (a list, a schedule kept on the CPU): the read is a host op,
                    # but its element becomes a constant of the graph it is used in
                    if self._used_with_tensors(node):
                        return "; the element is used with tensors: a tensor index is a constant in " \
                               "the graph, a Python number read here is a new scalar every pass"
                    return None

                fix = fix_later(self.an, self.roll_fixes, node, name, origin)
                self._report(node, name, origin, where, what, fix=fix)
                # each counter is a candidate: a parameter may or may not carry a step's counter
                # (`ctx[batch_index, :current_index]`), and a tile loop's counters are no step's
                # (`x[:, i:i+t, j:j+t]` inside a step) while a window loop's innermost one may be
                # (`result[..., i:i+r, j:j+r, k:k+r]` marking a step per window): the first that
                # changes every step is reported, once per subscript

    def _module_self(self, node: cst.Subscript):
        """`self`, when ``node`` indexes by dimensions (`texts[:, t]`: an array, not a list) in a
        method: in a module's code, an array it cannot place is a tensor."""
        fn = self.an.function
        if fn.cls is None or len(node.slice) < 2 or not any(type(el.slice) is cst.Slice for el in node.slice) \
                or not fn.params or fn.params[0] != "self":
            return None
        return self.an.value(cst.Name("self"))

    def _attribute_counter(self, node: cst.Subscript) -> None:
        """`self.sigmas[self.step_index]` in a method run every step, where some method of the
        class adds to the index each call (a scheduler's step counter); and slice bounds
        (`self.mask[self.pos:self.pos + n]`, a KV cache's write pointer)."""
        an = self.an
        if an.function.cls is None:
            return
        if len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index:
            self._counted_attrs(node, self_attributes(node.slice[0].slice.value), "a tensor index",
                                node.value, node)
            return
        for el in node.slice:
            s = el.slice
            if type(s) is cst.Slice:
                attrs = [a for part in (s.lower, s.upper) if part is not None for a in self_attributes(part)]
                if attrs:
                    self._counted_attrs(node, attrs, "a slice bound", node.value, node)
                    return

    def _counted_attrs(self, node: cst.CSTNode, attrs: list, where: str, base_node, used) -> None:
        an = self.an
        cls = an.function.cls
        base = an.value(base_node) if base_node is not None else None
        here = an.here()
        for attr in dict.fromkeys(attrs):
            def when(attr=attr):
                counted = an.facts.ask(("counter-attr", cls.cid, attr))
                if not counted:
                    return None
                if base is not None and not (an.is_device_tensor(base) or an.is_host(base)
                                             or self._used_with_tensors(used)):
                    return None  # (a schedule kept on the host: its element is a new constant)
                if where == "a slice bound" and base is not None and an.is_host(base):
                    return None  # (a window of a host tensor, `tokens[pos:pos + B * T + 1]`: new data, moved later)
                why = an.every_step(here)
                if why is None:
                    return None
                via = f"`self.{counted}` grows on every call" if counted == attr else \
                    f"`self.{attr}` returns `self.{counted}`, which grows on every call"
                return f"{via}, and {why[3:] if why.startswith('in ') else why}"

            self.report(node, ATTR_MESSAGE.format(name=f"self.{attr}", where=where, why="{why}"), when=when)

    def _factory_attribute(self, node: cst.Call, qn: str) -> None:
        """`torch.arange(self.current_pos, self.current_pos + n)`: a size from a counted attribute."""
        if qn not in FACTORIES or self.an.function.cls is None:
            return
        attrs = [a for arg in node.args if arg.keyword is None or arg.keyword.value in ("start", "end", "size")
                 for a in self_attributes(arg.value)]
        if attrs:
            self._counted_attrs(node, attrs, "a size", None, node)

    def _object_counter(self, node: cst.Subscript) -> None:
        """`memory[start:end] = k` with `start = inference_params.sequence_len_offset`, which a
        decoding helper adds to every step (see object_counters)."""
        an = self.an
        fn = an.function
        if fn.kind != "function":
            return
        for part, where in slice_parts(node):
            reads = self.objects.reads(fn, part)
            if not reads:
                continue
            obj, attr = reads[0]
            owner = an.value(cst.Name(obj))
            base = an.value(node.value)
            here = an.here()

            def when(owner=owner, obj=obj, attr=attr, base=base, here=here):
                res = an.resolve(owner)
                if res.kind in ("inst", "model") and res.ref:
                    counted = an.facts.ask(("counter-attr", res.ref, attr)) == attr
                else:  # `inference_params` the analysis cannot follow: the class it is named after
                    counted = res.kind == "unknown" and bool(an.facts.ask(("counter-attr-named", obj, attr)))
                if not counted or not an.is_device_tensor(base):
                    return None
                return an.every_step(here)

            self.report(node, OBJECT_MESSAGE.format(name=f"{obj}.{attr}", where=where, why="{why}"), when=when)
            return

    def _used_with_tensors(self, node: cst.Subscript) -> bool:
        an = self.an
        for use in self.tensor_uses.get(id(node), ()):
            if isinstance(use, tuple):
                how, qn, callee = use
                if how == "call-name" and an.kind(self.alias_bases.get(id(node), V_UNKNOWN)) in ("seq", "other"):
                    continue  # (a caption picked from a Python list of strings, named and passed on)
                if qn.startswith("torch.") or (callee is not None and an.is_model(callee)):
                    return True
            elif an.is_device_tensor(use):
                return True
        return False

    def _shape_args(self, node: cst.Call) -> None:
        an = self.an
        func = node.func
        qn = an.qualname(func) or ""
        recv = an.value(func.value) if type(func) is cst.Attribute else None
        fill = fill_value(qn, func, node)
        if fill is not None:
            self._fill_arg(node, fill, recv if not qn.startswith("torch.") else None)
        if qn in FILLED:  # torch.full(size, fill_value): only the size shapes the graph
            where, args, need = "a size", [a for a in node.args[:1] if a.keyword is None], None
            args += [a for a in node.args if a.keyword is not None and a.keyword.value == "size"]
        elif qn in FACTORIES:
            where, args, need = "a size", [a for a in node.args if a.keyword is None or a.keyword.value == "size"], None
        elif type(func) is cst.Attribute and func.attr.value in SHAPING and not qn.startswith("torch."):
            where, args, need = f"an argument of .{func.attr.value}()", list(node.args), recv
            if func.attr.value == "new_full":
                args = [a for a in node.args[:1] if a.keyword is None]
        elif qn.startswith("torch.") and qn.rsplit(".", 1)[-1] in SHAPING | {"cat", "stack"}:
            where, args, need = f"an argument of {qn}()", list(node.args[1:]), None
        elif qn.startswith("torch.") or type(func) is cst.Attribute:
            where = "a dim"
            args = [a for a in node.args if a.keyword is not None and a.keyword.value in SHAPING_KEYWORDS]
            need = recv if not qn.startswith("torch.") else None
        else:
            return
        for arg in args:
            hit = an.counter_in(arg.value)
            if hit is None:
                continue
            name, origin = hit
            val = an.value(arg.value)

            def what(val=val, need=need):
                if an.is_tensor(val):
                    return None
                if need is not None and not an.is_device_tensor(need):
                    return None
                return ""

            self._report(node, name, origin, where, what)
            return

    def _fill_arg(self, node: cst.Call, arg: cst.Arg, need) -> None:
        """`torch.full((b,), i)`: the counter is the value of a constant the graph creates (Gaudi:
        "different constant operators in the execution graph each time the loop is executed").
        PyTorch/XLA passes the fill value as data (calibrated: no graph per value), so not there."""
        an = self.an
        hit = an.counter_in(arg.value)
        if hit is None:
            return
        name, origin = hit
        val = an.value(arg.value)
        fn = an.function

        def what(val=val, need=need, fn=fn):
            if an.is_tensor(val) or an.target_of(fn) == "xla":
                return None
            if need is not None and not an.is_device_tensor(need):
                return None
            return ""

        self._report(node, name, origin, "a fill value", what)

    def _report(self, node: cst.CSTNode, name: str, origin, where: str, what, fix=None) -> None:
        an = self.an
        here = an.here()

        def when():
            why = an.counter_why(here, origin)
            if why is None or an.device_excluded(here) or an.runs_once(here):
                return None  # (under `if i == 0:` the pass is one pass: one constant, one graph)
            extra = what()
            if extra is None:
                return None
            inner = here.loop  # (the whole message: which one depends on the linked loops)
            while inner is not None and inner is not origin and not inner.is_step_loop:
                inner = inner.parent
            outer = isinstance(origin, Loop) and inner is not None and inner is not origin
            return (OUTER_MESSAGE if outer else MESSAGE).format(name=name, where=where, why=why + extra)

        self.report(node, "{why}", fix=fix, when=when)

