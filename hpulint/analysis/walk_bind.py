"""The walk's handlers for assignments (a mixin of :class:`Walker`); the uses of values are in walk_uses.py."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis import guards
from hpulint.analysis.containers import every_element, new_dict
from hpulint.analysis.calls import interval_guards
from hpulint.analysis.int_arith import clamped, int_step, is_int_arith
from hpulint.analysis.loops import int_seq_arity
from hpulint.analysis.names import SETUP_METHODS
from hpulint.analysis.walk_uses import COMPILE_FUNCTIONS
from hpulint.analysis.syntax import names_in, string_value
from hpulint.analysis.state import Loop
from hpulint.analysis.values import (
    Arith, Elem, Meth, Named, Ret, Sym, Tup, by_name, V_SEQ, V_TENSOR, V_UNKNOWN, Val, join,
)


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
        if type(node.value) is cst.Call and self.loop is not None:
            self._note_fed_back(node)
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
        if self.scope.kind == "module" and len(node.targets) == 1 and type(node.targets[0].target) is cst.Tuple \
                and type(call) is cst.Tuple and len(call.elements) == len(node.targets[0].target.elements):
            # `xla_compile, device = torch_xla.compile, torch_xla.device()`: the same, in a tuple
            for t, v in zip(node.targets[0].target.elements, call.elements):
                if type(t.value) is cst.Name and type(v.value) is cst.Attribute \
                        and self.qualname(v.value) in COMPILE_FUNCTIONS and t.value.value not in self.aliases:
                    self.aliases[t.value.value] = self.qualname(v.value)
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

    def _note_fed_back(self, node: cst.Assign) -> None:
        """`ids, logits = update(ids, cands, ...)` in a loop: the arguments whose names the result
        is assigned back to (the call's site keeps them)."""
        names = set()
        for t in node.targets:
            parts = [e.value for e in t.target.elements] if type(t.target) in (cst.Tuple, cst.List) else [t.target]
            names.update(e.value for e in parts if type(e) is cst.Name)
        if not names:
            return
        site = self.call_sites.get(id(node.value))
        if site is None:
            return
        pos = 0
        for a in node.value.args:
            if a.star:
                break
            if a.keyword is not None:
                if type(a.value) is cst.Name and a.value.value in names:
                    site.fed.append(a.keyword.value)
                continue
            if type(a.value) is cst.Name and a.value.value in names:
                site.fed.append(pos)
            pos += 1

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
            if value_node is not None and is_int_arith(value_node) and not clamped(value_node, self.counter_in):
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
            if type(value_node) is cst.Call and self.qualname(value_node.func) == "enumerate":
                fn.enumerated.add(name)  # `batches = enumerate(loader)`, then `for step, b in batches:`
            else:
                fn.enumerated.discard(name)
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
