"""The walk's handlers for assignments, calls, attributes and names (a mixin of :class:`Walker`)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis import guards
from hpulint.analysis.containers import every_element, new_dict
from hpulint.analysis.calls import interval_guards, record_call, record_property_read
from hpulint.analysis.loops import clause_bindings, int_seq_arity, int_step, is_int_arith
from hpulint.analysis.names import (DEFERRED_CALLBACKS, SETUP_METHODS, MARKING_LOADERS, MASK_FUNCTIONS,
                                    TENSOR_EVIDENCE)
from hpulint.analysis.syntax import names_in, string_value
from hpulint.analysis.state import Loop
from hpulint.analysis.values import (
    Arith, Elem, K, Meth, Named, Param, Ret, RetOf, Self, Sym, Tup, Used, by_name, V_SEQ, V_TENSOR, V_UNKNOWN, Val, join,
)
from hpulint.analysis.walker_base import MISSING, TENSOR_ATTRIBUTE_EVIDENCE, _off_flag

# methods only a module has, called on a parameter: it is a model. Not `train()` (a Trainer's
# run) nor `state_dict()` (optimizers and schedulers have one too).
MODEL_EVIDENCE = frozenset({"eval", "parameters", "named_parameters", "buffers", "named_buffers", "modules",
                            "named_modules", "children", "named_children", "register_buffer",
                            "register_forward_hook", "register_forward_pre_hook", "get_submodule"})

COMPILE_FUNCTIONS = frozenset({"torch.compile", "torch_xla.compile"})


_MARKING_LOADER_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in MARKING_LOADERS)

class Bindings:
    # --- assignments ------------------------------------------------------------------------

    # Targets are bound when the statement is left: Python evaluates the value first, so a rule
    # looking at `x.cpu()` in `x = x.cpu()` sees the `x` from before.

    def _enter_assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._note_store(t.target)

    def _leave_assign(self, node: cst.Assign) -> None:
        if self._imported_module(node):
            return
        val = self.value(node.value)
        for t in node.targets:
            self._assign(t.target, val, node.value)
        if len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
            self._moved_batch_part(node.targets[0].target.value, node.value)
            fn = self.function
            if type(node.value) is cst.Name and node.value.value in ("True", "False") and fn.kind == "function" \
                    and self.blocks and self.blocks[-1].kind == "body" and self.blocks[-1].scope is fn:
                fn.const_bools[node.targets[0].target.value] = node.value.value == "True"
            name = node.targets[0].target.value
            if type(node.value) in (cst.BooleanOperation, cst.UnaryOperation, cst.Comparison, cst.Call):
                device = guards.device_predicate(node.value, fn.device_flags)
                if device is not None:
                    fn.device_flags[name] = device
                else:
                    fn.device_flags.pop(name, None)
            elif fn.device_flags:
                fn.device_flags.pop(name, None)
        for t in node.targets:
            if type(t.target) is cst.Attribute and type(t.target.value) is cst.Name \
                    and t.target.value.value != "self":
                self.function.attr_resets.add((t.target.value.value, t.target.attr.value))
            self._note_device_object(t.target, node.value)
            self._note_host_index(t.target, node.value)
            self._note_cpu_name(t.target, node.value)
            self._note_registry(t.target, node.value)
            if type(t.target) is cst.Name:
                (self.function.dict_names.add if new_dict(node.value)
                 else self.function.dict_names.discard)(t.target.value)

    def _moved_batch_part(self, name: str, value: cst.BaseExpression) -> None:
        """`input_ids = input_ids.to(device)` for a part of a batch a `for` unpacked
        (`for input_ids, mask, example_indices in loader:`): the loader yields host tensors, so
        the parts the pass leaves where they are (`example_indices`) stay on the host."""
        loop = self.loop
        if loop is None or name not in loop.batch_parts or type(value) is not cst.Call \
                or type(value.func) is not cst.Attribute or value.func.attr.value not in ("to", "cuda") \
                or type(value.func.value) is not cst.Name or value.func.value.value != name:
            return
        loop.moved_parts.add(name)
        fn = self.function
        for other, original in loop.batch_parts.items():
            if other not in loop.moved_parts and fn.bindings.get(other) is original:
                fn.bindings[other] = Meth(original, "cpu")  # (unknown stays unknown)
                self.value_cache.clear()

    def _imported_module(self, node: cst.Assign) -> bool:
        """`pl = importlib.import_module("torch_xla.distributed.parallel_loader")`: an import; and
        `compile_step = torch_xla.compile` at module level: the compile function under another name
        (a later fallback such as `compile_step = lambda f: torch.compile(f)` keeps the name)."""
        call = node.value
        if self.scope.kind == "module" and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name \
                and type(call) is cst.Attribute and self.qualname(call) in COMPILE_FUNCTIONS:
            self.aliases[node.targets[0].target.value] = self.qualname(call)
            self._qualnames.clear()
            return False
        if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name or type(call) is not cst.Call \
                or self.qualname(call.func) != "importlib.import_module" or len(call.args) != 1:
            return False
        full = string_value(call.args[0].value)
        if not full or not all(part.isidentifier() for part in full.split(".")):
            return False
        local = node.targets[0].target.value
        self._note_target(full)
        self.aliases[local] = full
        self._bind(local, Sym(full))
        self._qualnames.clear()
        return True

    def _enter_ann_assign(self, node: cst.AnnAssign) -> None:
        self._note_store(node.target)

    def _leave_ann_assign(self, node: cst.AnnAssign) -> None:
        ann = node.annotation.annotation
        if self.scope.kind == "class" and type(node.target) is cst.Name and self.current_class is not None \
                and node.value is None and self._is_tensor_annotation(ann):
            # a dataclass field `preds: torch.Tensor`: what `out.preds` holds
            self.current_class.fields[node.target.value] = V_TENSOR
        elif self.scope.kind == "class" and type(node.target) is cst.Name and type(ann) in (cst.Name, cst.Attribute):
            # a dataclass or pydantic field, `net: DiffusionPriorNetworkConfig`: `self.net` is
            # an instance of the class it names (when the project defines it)
            cls = self.current_class
            declared = self.value(ann)
            if cls is not None and declared.tag == "sym" and ":" in declared.ref:  # a project class
                cls.fields[node.target.value] = Ret(declared.ref)
        if node.value is not None:
            self._assign(node.target, self.value(node.value), node.value)
        elif type(node.target) is cst.Name and self._is_tensor_annotation(node.annotation.annotation):
            self._bind(node.target.value, V_TENSOR)

    def _enter_aug_assign(self, node: cst.AugAssign) -> None:
        self._note_store(node.target)

    def _leave_aug_assign(self, node: cst.AugAssign) -> None:
        if type(node.target) is cst.Name:
            name = node.target.value
            loop = self.loop
            if loop is not None:
                if name not in loop.assigned:
                    loop.read_before_assign.add(name)
                loop.assigned.add(name)
            old = self._function.bindings.get(name)
            if type(node.operator) is cst.AddAssign and type(node.value) is cst.List \
                    and (old is V_SEQ or isinstance(old, Tup)):
                # `actions += [sampled_action]`: the list holds the new elements too, as with append
                for el in node.value.elements:
                    if type(el) is cst.Element:
                        self.refine_elements(name, self.value(el.value))
                return
            self._bind_keeping_counter(name, Arith((self.lookup(name), self.value(node.value))))
        elif type(node.target) is cst.Attribute and type(node.target.value) is cst.Name \
                and node.target.value.value == "self" and self.current_class is not None:
            self.current_class.attrs.setdefault(node.target.attr.value, []).append(self.value(node.value))
            if type(node.operator) in (cst.AddAssign, cst.SubtractAssign) and self.function.name not in SETUP_METHODS:
                self.current_class.counter_attrs.add(node.target.attr.value)
        elif type(node.target) is cst.Attribute and type(node.target.value) is cst.Name \
                and type(node.operator) in (cst.AddAssign, cst.SubtractAssign) and int_step(node.value):
            # `inference_params.sequence_len_offset += tokens.size(1)`: a counter held by the object
            base = node.target.value.value
            self.function.attr_bumps.setdefault(base, (self.lookup(base), set()))[1].add(node.target.attr.value)

    def _note_store(self, target: cst.BaseExpression) -> None:
        """Names a statement stores to are not reads (for the loop-carried facts)."""
        if type(target) in (cst.Name, cst.Attribute):
            self._stores.add(id(target))
        elif type(target) in (cst.Tuple, cst.List):
            for el in target.elements:
                self._note_store(el.value)
        elif type(target) is cst.StarredElement:
            self._note_store(target.value)
        elif type(target) is cst.Subscript and type(target.value) is cst.Name:
            self._store_bases.add(id(target.value))  # (`grid[:, i] = x` reads grid, only to store)

    def refine_elements(self, name: str, element: Val, replace: bool = False) -> None:
        """`xs.append(t)`, `xs[i] = t`: the list bound to ``xs`` holds ``element`` too (not an
        assignment of ``xs``: certainly-assigned facts stay as they are). A dict the function
        made (`tokens = {"input_ids": [], ...}`) and then stores a tensor in
        (`tokens["input_ids"] = torch.stack(...)`) holds tensors from then on, as a list does."""
        fn = self._function
        old = fn.bindings.get(name)
        if name in fn.dict_names and element is not V_UNKNOWN and not isinstance(old, Tup):
            old = V_SEQ
        if old is None or not (old is V_SEQ or isinstance(old, Tup)):
            return
        parts = (join((old.parts[0], element)),) if isinstance(old, Tup) and len(old.parts) == 1 \
            and not replace else (element,)
        block = self.blocks[-1] if self.blocks else None
        if block is not None and block.scope is fn and name not in block.prior:
            block.prior[name] = old
        fn.bindings[name] = Tup(parts)
        self.value_cache.clear()

    def _bind_keeping_counter(self, name: str, val: Val) -> None:
        fn = self.function
        kept = fn.pcounters.get(name)
        self._bind(name, val)
        if kept is not None:
            fn.pcounters[name] = kept

    def _enter_named_expr(self, node: cst.NamedExpr) -> None:
        self._note_store(node.target)

    def _leave_named_expr(self, node: cst.NamedExpr) -> None:
        self._assign(node.target, self.value(node.value), node.value)

    def _assign(self, target: cst.BaseExpression, val: Val, value_node: Optional[cst.BaseExpression]) -> None:
        if type(target) in (cst.Tuple, cst.List):
            els = target.elements
            if type(value_node) in (cst.Tuple, cst.List) and len(value_node.elements) == len(els) \
                    and not any(type(e) is cst.StarredElement for e in (*els, *value_node.elements)):
                for te, ve in zip(els, value_node.elements):
                    self._assign(te.value, self.value(ve.value), ve.value)
                return
            for k, el in enumerate(els):
                part = V_SEQ if type(el) is cst.StarredElement else Elem(val, k)
                self._assign(el.value, part, None)
            return
        if type(target) is cst.Name:
            name = target.value
            loop = self.loop
            fn = self.function
            derived = None
            if value_node is not None and is_int_arith(value_node):
                hit = self.counter_in(value_node)
                if hit is not None:
                    derived = hit
            if loop is not None:
                if name not in loop.assigned and value_node is not None and name in set(names_in(value_node)):
                    loop.read_before_assign.add(name)  # x = f(x): carried from the last pass
                loop.assigned.add(name)
            if type(value_node) is cst.Lambda and type(value_node.body) is cst.Call \
                    and type(value_node.body.func) is cst.Attribute \
                    and value_node.body.func.attr.value == "register_buffer":
                fn.buffer_setters.add(name)
            else:
                fn.buffer_setters.discard(name)
            arity = int_seq_arity(self, value_node) if value_node is not None else 0
            if arity:
                fn.int_seqs[name] = arity
            else:
                fn.int_seqs.pop(name, None)
            flags = fn.interval_flags
            if value_node is not None and self.is_interval(value_node):
                flags.add(name)  # `log_now = step % k == 0`: `if log_now:` is a logging interval
            else:
                flags.discard(name)
            if by_name(name).kind != "unknown" and not isinstance(val, (Sym,)):
                val = Named(val, name)  # `model = load(...)`: the name decides if nothing else does
            # `result = result.index_select(0, beams)` keeps the last pass's value in a new form:
            # not a fresh definition of this pass (an accumulator after it still grows)
            keeps_last = False
            if loop is not None and value_node is not None:
                read = set(names_in(value_node))
                deps: set = set()
                for n in read:
                    got = loop.deps.get(n)
                    deps |= got if got is not None else {n}
                # (or through the names made from it in this pass: `x = cache.generate(prefix)`,
                # `prefix = x[:, :n + 1]` keeps the last pass's prefix, cut and extended)
                keeps_last = name in deps or (name in read and not self.defined_in_pass(name, loop))
                loop.deps[name] = deps
            self._bind(name, val)
            if keeps_last:
                self.blocks[-1].defs.discard(name)
            # (a branch's constant, or a value of the counter, keeps a name another branch derived
            # from the counter: `if j <= 8: local_j = j ... else: local_j = 8` still varies from
            # pass to pass; `seek = seek_clip_start` from elsewhere does not)
            branch = derived is None and value_node is not None and self.blocks \
                and self.blocks[-1].kind in ("if-body", "else") \
                and (type(value_node) is cst.Integer or self.counter_in(value_node) is not None)
            for lp in loop.chain() if loop is not None and not branch else ():
                lp.counters.discard(name)
            if derived is not None:
                origin = derived[1]
                if isinstance(origin, Loop):
                    origin.counters.add(name)
                else:
                    fn.pcounters[name] = origin
            return
        if type(target) is cst.Subscript and type(target.value) is cst.Name:
            self.refine_elements(target.value.value, val, every_element(self, target))
            if self.loop is not None:
                self.loop.mutated.add(target.value.value)  # `tokens[:, step + 1] = nxt`: read next pass
                if self.loop.counters.intersection(names_in(target)):
                    self.loop.fills.add(target.value.value)
            return
        if type(target) is cst.Attribute and type(target.value) is cst.Name \
                and target.value.value == "self":
            cls = self.current_class
            fn = self.function
            if self.blocks and self.blocks[-1].kind == "body" and self.blocks[-1].scope is fn:
                name = target.attr.value
                named = by_name(name).kind != "unknown" and not isinstance(val, Sym)
                fn.self_binds[name] = Named(val, name) if named else val  # (as a name's binding)
            else:
                fn.self_binds.pop(target.attr.value, None)  # one path's value: the class's join
            if cls is not None:
                cls.attrs.setdefault(target.attr.value, []).append(val)
                v = value_node
                if type(v) is cst.BinaryOperation and type(v.operator) is cst.Modulo:
                    v = v.left  # `self.step = (self.step + 1) % self.num_steps`: a counter that wraps
                if type(v) is cst.Name and v.value == "True" and guards.is_log_flag(target.attr.value):
                    cls.flag_sets.append((target.attr.value, self.function.fid, interval_guards(self)))
                if type(v) is cst.BinaryOperation and type(v.operator) in (cst.Add, cst.Subtract) \
                        and any(type(x) is cst.Attribute and x.deep_equals(target) for x in (v.left, v.right)) \
                        and self.function.name not in SETUP_METHODS:
                    cls.counter_attrs.add(target.attr.value)  # self.n = self.n + 1 (not once, in __init__)

    # --- calls: the facts that make a loop a step loop --------------------------------------

    def _enter_call(self, node: cst.Call) -> None:
        self.call_order[id(node)] = len(self.call_order)
        if type(node.func) is cst.Attribute:
            self._called_attrs.add(id(node.func))
            if node.func.attr.value == "add_argument":
                flag = _off_flag(node)
                if flag:
                    self.off_flags.add(flag)
            if node.func.attr.value == "append" and len(node.args) == 1:
                self._appended(node.func.value, node.args[0].value)
            if node.func.attr.value in _TENSOR_INPUT_LEAVES and node.args and node.args[0].keyword is None:
                self._tensor_argument(node)
        record_call(self, node)
        name = node.func.attr.value if type(node.func) is cst.Attribute else getattr(node.func, "value", "")
        if name in _MARKING_LOADER_NAMES and self.qualname(node.func) in MARKING_LOADERS:
            # the project wraps its loaders for the device somewhere (a loader factory)
            self.evidence.setdefault("device-loader", f"builds a {name}")
        if name not in DEFERRED_CALLBACKS:
            for a in node.args:
                if type(a.value) is cst.Lambda:  # `apply(batch, lambda x: x.item())`: runs in this call
                    self._arg_lambdas.add(id(a.value))

    def _tensor_argument(self, node: cst.Call) -> None:
        """`torch.isnan(x)`, `F.softmax(x, -1)`: a parameter passed as the input of a torch op is
        a tensor (evidence, as `x.unsqueeze(0)` is)."""
        first = node.args[0].value
        rooted = type(first) is not cst.Name
        if rooted:
            first = _operand_root(first)  # `torch.sqrt(1.0 + sigmas[0] ** 2.0)`
            if first is None:
                return
        qn = self.qualname(node.func) or ""
        if not (qn in MASK_FUNCTIONS or qn.startswith("torch.nn.functional.")
                or (qn.startswith("torch.") and qn.count(".") == 1 and qn[6:] in _TENSOR_INPUT_LEAVES)):
            return
        v = self.lookup(first.value)
        fn = self.function
        if type(v) is Param and v.fid == fn.fid and v.name not in fn.evidence and not rooted:
            fn.evidence[v.name] = "tensor"
            fn.pcounters.pop(first.value, None)
        elif type(v) is not Param:
            self._note_use(first.value, "tensor")

    def _appended(self, target: cst.BaseExpression, item: cst.BaseExpression) -> None:
        """`self.slots.append(Slot(...))`: the list attribute holds such items (a loop over it
        elsewhere in the class gets them)."""
        if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":
            cls = self.current_class
            if cls is not None:
                cls.attrs.setdefault(target.attr.value, []).append(Tup((self.value(item),)))

    def _note_use(self, name: str, kind: str) -> None:
        """A local name whose value the analysis may not know (what a configured object's call
        returns) is used as only a tensor (or a module) is: where nothing else says what it is,
        its reads from here on are one."""
        fn = self.function
        v = fn.bindings.get(name)
        if v is None or type(v) in _SAYS_WHAT_IT_IS:
            return
        if type(v) in (Ret, RetOf) and v.ref.rsplit(".", 1)[-1][:1].isupper():
            return  # an object of a class (`Accelerator(...)`): its methods say nothing of tensors
        fn.bindings[name] = Used(v, kind)
        if self.value_cache:
            self.value_cache.clear()

    def _enter_attribute(self, node: cst.Attribute) -> None:
        # `x.new_ones(...)`, `x.shape`, `x.float()`: evidence that parameter x is a tensor
        # (a method only when called: `args.dim` is a field, `x.dim()` a tensor's method)
        base = node.value
        name = node.attr.value
        if type(base) is not cst.Name:
            return
        if base.value == "self" and id(node) not in self._called_attrs and id(node) not in self._stores:
            record_property_read(self, node)  # `self.temperature`: a property's getter runs
        if name in TENSOR_ATTRIBUTE_EVIDENCE or (name in TENSOR_EVIDENCE and id(node) in self._called_attrs):
            kind = "tensor"
        elif name in _NOT_A_NUMBER and self.function.evidence.get(base.value) == "scalar":
            kind = "tensor"  # `timestep: int`, then `timestep.cpu()`, `timestep.device`
        elif name in MODEL_EVIDENCE and id(node) in self._called_attrs:
            kind = "model"  # `model.eval()`, `net.parameters()`: only a module has these
        else:
            return
        v = self.lookup(base.value)
        if type(v) is Param and v.name not in ("self", "cls"):  # `self.norm(h)` calls a layer
            fn = self.function
            # (`timestep: int` then `timestep.cpu()`: no int has that; the annotation is wrong,
            # callers pass a tensor)
            if v.fid == fn.fid and (v.name not in fn.evidence or kind == "tensor" and fn.evidence[v.name] == "scalar"):
                fn.evidence[v.name] = kind
                fn.pcounters.pop(base.value, None)
        elif kind == "model" or name not in _ARRAY_TOO:
            self._note_use(base.value, kind)

    def _enter_subscript(self, node: cst.Subscript) -> None:
        # `alphas[index]` with a parameter (or int arithmetic on one): the link step decides
        # whether a step loop's counter arrives there
        fn = self._function
        if type(node.value) is cst.Name and len(node.slice) > 1 and any(
                type(el.slice) is cst.Slice and el.slice.lower is None and el.slice.upper is None
                for el in node.slice):
            # `tokens[:, a:b]`: indexed by dimensions, an array (as `x.shape` says)
            v = self.lookup(node.value.value)
            if type(v) is Param and v.fid == fn.fid and v.name not in fn.evidence \
                    and v.name not in ("self", "cls"):
                fn.evidence[v.name] = "tensor"
                fn.pcounters.pop(node.value.value, None)
        if not fn.pcounters:
            return
        for el in node.slice:
            s = el.slice
            parts = [s.value] if type(s) is cst.Index else [p for p in (s.lower, s.upper, s.step) if p is not None]
            for part in parts:
                for n in names_in(part):
                    origin = fn.pcounters.get(n)
                    if isinstance(origin, str):
                        fn.index_uses.append((origin, self.value(node.value)))
                        return

    # comprehensions: `[l.item() for l in losses]`, `{k: v.cpu() for k, v in d.items()}`; their
    # targets are bound before the element is walked (libcst visits it first) and unbound after

    def _enter_comprehension(self, node) -> None:
        fn = self._function
        saved = {}
        clause = node.for_in
        while clause is not None:  # a later clause's iterable may read an earlier target
            for name, val in clause_bindings(self, clause):
                if name not in saved:
                    saved[name] = fn.bindings.get(name, MISSING)
                fn.bindings[name] = val
            self.value_cache.clear()
            clause = clause.inner_for_in
        self._comprehensions.append(saved)

    def _leave_comprehension(self, node) -> None:
        fn = self._function
        # (what the element is, while its targets are bound; a dict's: its values)
        self.comp_elems[id(node)] = self.value(node.value if type(node) is cst.DictComp else node.elt)
        for name, prior in self._comprehensions.pop().items():
            if prior is MISSING:
                fn.bindings.pop(name, None)
            else:
                fn.bindings[name] = prior
        self.value_cache.clear()

    def _enter_name(self, node: cst.Name) -> None:
        loop = self.loop
        if loop is not None and node.value not in loop.assigned and id(node) not in self._stores:
            loop.read_before_assign.add(node.value)
        if loop is not None and id(node) not in self._store_bases:
            loop.reads.add(node.value)


# what a NumPy array has too: not evidence that a local of unknown origin is a tensor
# or what other objects have (an Accelerator's `gather`, a process group's `scatter`, `grad`)
# what a number annotated `int`/`float` has not, but a tensor (or a module) has
_NOT_A_NUMBER = frozenset({"cpu", "cuda", "to", "device", "dtype"})
_ARRAY_TOO = frozenset({"shape", "item", "squeeze", "view", "dim", "numel", "gather", "scatter", "chunk",
                        "norm", "grad"})
# values that say what they are (a known kind, a parameter, which has its own evidence, a symbol)
_SAYS_WHAT_IT_IS = (K, Param, Self, Sym, Used, Tup)


def _operand_root(expr: cst.BaseExpression) -> Optional[cst.Name]:
    """The one name an arithmetic of numbers and element reads is about: `sigmas` in
    `1.0 + sigmas[0] ** 2.0`; None if there is none or more than one."""
    while True:
        tp = type(expr)
        if tp is cst.Subscript:
            if any(type(e.slice) is cst.Index and type(e.slice.value) in (cst.SimpleString, cst.FormattedString)
                   for e in expr.slice):
                return None  # `kwargs["attention_mask"]`: an item of a dict, not of a tensor
            expr = expr.value
        elif tp is cst.BinaryOperation:
            sides = [x for x in (expr.left, expr.right) if type(x) not in (cst.Integer, cst.Float)]
            if len(sides) != 1:
                return None
            expr = sides[0]
        elif tp is cst.UnaryOperation:
            expr = expr.expression
        else:
            return expr if tp is cst.Name else None


# torch functions whose first argument is a tensor input (besides torch.nn.functional.* and the
# mask functions): a parameter passed there is a tensor
_TENSOR_INPUT_LEAVES = frozenset({
    "isnan", "isinf", "isfinite", "sum", "mean", "exp", "log", "sigmoid", "tanh", "softmax",
    "log_softmax", "matmul", "bmm", "mm", "norm", "abs", "sqrt", "clamp", "argmax", "argmin",
    "topk", "sort", "flatten", "squeeze", "unsqueeze", "transpose", "permute", "reshape",
    "masked_fill", "gather", "relu", "gelu", "silu", "dropout", "layer_norm", "cross_entropy",
    "mse_loss", "nll_loss", "linear", "conv2d", "interpolate", "pad", "normalize", "embedding",
})

