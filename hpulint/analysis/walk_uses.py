"""The walk's handlers for calls, attributes, subscripts, comprehensions and names: the uses that
tell what a value is and make a loop a step loop (a mixin of :class:`Walker`)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.calls import record_call, record_property_read
from hpulint.analysis.loops import clause_bindings
from hpulint.analysis.names import DEFERRED_CALLBACKS, MARKING_LOADERS, MASK_FUNCTIONS, TENSOR_EVIDENCE
from hpulint.analysis.syntax import names_in
from hpulint.analysis.values import (
    K, Param, Ret, RetOf, Self, Sym, Tup, Used,
)
from hpulint.analysis.walker_base import MISSING, TENSOR_ATTRIBUTE_EVIDENCE, _off_flag

# methods only a module has, called on a parameter: it is a model. Not `train()` (a Trainer's
# run) nor `state_dict()` (optimizers and schedulers have one too).
MODEL_EVIDENCE = frozenset({"eval", "parameters", "named_parameters", "buffers", "named_buffers", "modules",
                            "named_modules", "children", "named_children", "register_buffer",
                            "register_forward_hook", "register_forward_pre_hook", "get_submodule"})

COMPILE_FUNCTIONS = frozenset({"torch.compile", "torch_xla.compile"})


_MARKING_LOADER_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in MARKING_LOADERS)


class Uses:
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
        self._attr_names.add(id(node.attr))
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
        if loop is None:
            return
        # (`norm = torch.linalg.norm(p)`: the name after a dot reads no `norm` from the last pass)
        if node.value not in loop.assigned and id(node) not in self._stores and id(node) not in self._attr_names:
            loop.read_before_assign.add(node.value)
        if id(node) not in self._store_bases:
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

