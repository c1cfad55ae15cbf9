"""The walk's handlers for classes, functions, lambdas and returns (a mixin of :class:`Walker`)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.loops import int_seq_arity
from hpulint.analysis.syntax import last_name, param_names
from hpulint.analysis.state import Block, ClassInfo, Scope
from hpulint.analysis.names import MODEL_BASES, MODULE_BASES
from hpulint.analysis.values import Param, Self, Sym, V_HOST, V_MODEL, V_NONE, V_OTHER, V_SEQ, V_SEQ_TENSOR, V_TENSOR
from hpulint.analysis.walker_base import _ANNOTATED, _TENSOR_ANNOTATIONS


# jaxtyping's dtype annotations (https://docs.kidger.site/jaxtyping/api/array/)
_SHAPED_DTYPES = frozenset({"Float", "Int", "Bool", "Shaped", "Real", "Num", "Integer", "Inexact", "UInt",
                            "Complex", "Float16", "Float32", "Float64", "BFloat16", "Int8", "Int16", "Int32",
                            "Int64", "UInt8"})


class Definitions:
    # --- classes and functions ---------------------------------------------------------------

    def symbol_ref(self, node: cst.BaseExpression) -> Optional[str]:
        """The project id or dotted name a Name/Attribute chain refers to, through bindings."""
        if type(node) is cst.Name:
            v = self.lookup(node.value)
            return v.ref if isinstance(v, Sym) else None
        if type(node) is cst.Attribute:
            head = self.symbol_ref(node.value)
            return f"{head}.{node.attr.value}" if head else None
        if type(node) is cst.Subscript:  # Generic[T], nn.Module subscripted
            return self.symbol_ref(node.value)
        return None

    def _enter_class(self, node: cst.ClassDef) -> None:
        parent = self.scope
        qual = f"{parent.qual}.{node.name.value}" if parent.qual else node.name.value
        cid = self._ids.get(id(node)) or self._new_id(qual)
        bases = [self.symbol_ref(b.value) or self.qualname(b.value) or "" for b in node.bases if not b.keyword]
        info = ClassInfo(node, node.name.value, cid, [b for b in bases if b])
        # `@register_predictor(name="euler")`: a registry's values may be classes (see registries)
        info.decorators = [self.qualname(d.decorator.func if type(d.decorator) is cst.Call else d.decorator)
                           or "" for d in node.decorators]
        self.classes[id(node)] = info
        self.classes_by_cid[cid] = info
        if id(node) not in self._ids:
            self._bind(node.name.value, Sym(cid))
        else:  # (bound before the walk, for every function; a name imported above it is replaced here)
            self.module_scope.bindings[node.name.value] = Sym(cid)
        scope = Scope("class", node, node.name.value, parent, fid=cid)
        scope.qual = qual
        scope.pcounters = {}
        self._push_scope(scope)
        self.statements.append(node)
        self.blocks.append(Block("body", scope))

    def _leave_class(self, node: cst.ClassDef) -> None:
        cls = self.classes.get(id(node))
        if cls is not None:
            for name, declared in cls.fields.items():
                if name not in cls.attrs:  # (what its methods assign says more than the declaration)
                    cls.attrs[name] = [declared]
            if cls.trains and not cls.moved and "forward" not in cls.methods:
                # a trainer module (it trains, it is no model, nothing moves it): the buffers it
                # made in host memory (a step counter) stay there; only the models it holds move
                for name in cls.host_buffers:
                    cls.attrs[name] = [V_HOST if v is V_TENSOR else v for v in cls.attrs[name]]
        self.blocks.pop()
        self._pop_scope()
        self.statements.pop()

    def _enter_function(self, node: cst.FunctionDef) -> None:
        parent = self.scope
        cls = self.classes.get(id(parent.node)) if parent.kind == "class" else None
        name = node.name.value
        qual = f"{parent.qual}.{name}" if parent.qual else name
        fid = self._ids.get(id(node)) or self._new_id(qual)
        if id(node) not in self._ids and parent.kind != "class":
            self._bind(name, Sym(fid))
        elif id(node) in self._ids:
            # a module-level def, bound before the walk; `from monotonic_align import
            # maximum_path` above it is replaced when the def runs (what the module exports)
            self.module_scope.bindings[name] = Sym(fid)
        scope = Scope("function", node, name, parent, fid=fid, cls=cls)
        scope.qual = qual
        scope.if_depth = len(self.if_branches)
        scope.decorators = [self.qualname(d.decorator.func if type(d.decorator) is cst.Call else d.decorator)
                            or "" for d in node.decorators]
        if cls is not None:
            # the last definition is the method Python keeps; `@overload` stubs and property
            # setters do not replace it
            if name not in cls.methods or not any(
                    d.endswith(("overload", ".setter", ".deleter")) for d in scope.decorators):
                cls.methods[name] = fid
        params = node.params
        plist = [*params.posonly_params, *params.params]
        static = any(d.endswith("staticmethod") for d in scope.decorators)
        classmethod = any(d.endswith("classmethod") for d in scope.decorators)
        scope.params = param_names(node)
        scope.pcounters = {}
        for i, p in enumerate([*plist, *params.kwonly_params]):
            pname = p.name.value
            if i == 0 and cls is not None and not static and p in plist:
                scope.bindings[pname] = Sym(cls.cid) if classmethod else Self(cls.cid)
                continue
            scope.bindings[pname] = Param(fid, pname)
            if type(p.default) is cst.Name and p.default.value in ("None", "False"):
                scope.none_params.add(pname)
            if p.default is not None and type(p.default) in (cst.Name, cst.Attribute):
                default = self.value(p.default)  # (evaluated where the function is defined)
                if default.tag in ("sym", "attr"):
                    scope.defaults[pname] = default
            ann = p.annotation.annotation if p.annotation is not None else None
            if ann is not None and self._is_tensor_annotation(ann):
                scope.evidence[pname] = "tensor"
                continue
            shaped = self._shaped_annotation(ann) if type(ann) is cst.Subscript else None
            if shaped is not None:  # `face_mask: Bool['b nf']`, `x: Float[Tensor, "b n d"]`
                scope.evidence[pname] = shaped
                continue
            if ann is not None and self._annotation_value(ann) is V_MODEL:
                scope.evidence[pname] = "model"  # `module: nn.Module`, `model: PreTrainedModel`
                continue
            scope.pcounters[pname] = pname
            if ann is not None:  # `n: int`, `args: ModelArgs`: what it is, not what its uses suggest
                scope.evidence[pname] = self._annotated_kind(ann)
        for star in (params.star_arg, params.star_kwarg):
            if type(star) is cst.Param:
                scope.bindings[star.name.value] = V_SEQ if star is params.star_arg else V_OTHER
        if node.returns is not None:
            scope.ret_annotation = self._annotation_value(node.returns.annotation)
        self._push_scope(scope)
        self.all_functions.append(scope)
        self.statements.append(node)
        self.blocks.append(Block("body", scope))
        for d in scope.decorators:
            if d == "torch.compile" or d.endswith("torch_xla.compile"):
                self.evidence.setdefault("compile", f"@{d.rsplit('.', 1)[-1] if d != 'torch.compile' else d} "
                                                    f"on {name}()")

    def _leave_function(self, node: cst.FunctionDef) -> None:
        scope = self.scopes[-1]
        arities = set(scope.int_returns)
        if len(arities) == 1 and 0 not in arities and not scope.yields:
            # `def get_sigma_gen(n): gen = range(n - 1); ...; return gen`: its callers loop over ints
            self.int_seq_fns[scope.fid] = arities.pop()
        for _ in range(scope.early_guards):
            self.if_branches.pop()
        self.close_flags(scope)
        if scope.pending_compile is not None:
            helper = not scope.loops and not scope.name.startswith("main")
            self.evidence.setdefault("compile-optional" if helper else "compile", scope.pending_compile)
        self.blocks.pop()
        self._pop_scope()
        self.statements.pop()

    def _annotated_kind(self, ann: cst.BaseExpression) -> str:
        """What a parameter annotation that is not a tensor says: "scalar" (`int`, `bool | None`),
        "seq" (`list[int]`), "seq-tensor" (`list[Tensor]`, `dict[str, Tensor]`), "other"
        (`dict[str, Any]`, `str`); "" when it says nothing (`Any`, `Union[int, Tensor]`, a class)."""
        if type(ann) is cst.Subscript:
            head = last_name(ann.value) or ""
            parts = [el.slice.value for el in ann.slice if type(el.slice) is cst.Index]
            if head == "Optional" and len(parts) == 1:
                return self._annotated_kind(parts[0])
            kind = _ANNOTATED.get(head, "")
            if kind in ("seq", "other") and parts:
                inner = parts[-1] if head in ("dict", "Dict", "Mapping") else parts[0]
                if self._is_tensor_annotation(inner) or self._annotated_kind(inner) == "seq-tensor":
                    # (`List[Tuple[Tensor, Tensor]]`: a layer's key and value caches, each item tensors)
                    return "seq-tensor"
            return kind
        return _ANNOTATED.get(_annotated_name(ann), "")

    def _shaped_annotation(self, ann: cst.Subscript):
        """jaxtyping's shape-and-dtype annotations (`Float[Tensor, "b n"]`, and the
        `Float['b n']` / `Bool['b nf']` aliases projects define over them): "mask" for `Bool`,
        "tensor" for the other dtypes; None for anything else."""
        qn = self.qualname(ann.value) or ""
        head = qn.rsplit(".", 1)[-1]
        if head not in _SHAPED_DTYPES:
            return None
        first = next((el.slice.value for el in ann.slice if type(el.slice) is cst.Index), None)
        if not (qn.startswith("jaxtyping.") or type(first) is cst.SimpleString
                or (first is not None and self._is_tensor_annotation(first))):
            return None
        return "mask" if head == "Bool" else "tensor"

    def _is_tensor_annotation(self, ann: cst.BaseExpression) -> bool:
        """`Tensor`, `Optional[Tensor]`, `Tensor | None`, `Union[Tensor, None]`: not
        `Union[int, Tensor]` (its callers say which) nor `list[Tensor]`."""
        if type(ann) is cst.Subscript:
            if (self.qualname(ann.value) or "").rsplit(".", 1)[-1] not in ("Optional", "Union"):
                return False
            members = [el.slice.value for el in ann.slice if type(el.slice) is cst.Index]
            members = [m for m in members if not (type(m) is cst.Name and m.value == "None")]
            return bool(members) and all(self._is_tensor_annotation(m) for m in members)
        if type(ann) is cst.BinaryOperation:  # Tensor | None
            sides = [s for s in (ann.left, ann.right) if not (type(s) is cst.Name and s.value == "None")]
            return bool(sides) and all(self._is_tensor_annotation(s) for s in sides)
        if type(ann) is cst.SimpleString:
            return ann.value.strip("'\"") in ("Tensor", "torch.Tensor")
        return self.qualname(ann) in _TENSOR_ANNOTATIONS

    def _annotation_value(self, ann: cst.BaseExpression):
        """A return annotation that says tensor (`-> Tensor`), tensors (`-> dict[str, Tensor]`,
        `-> Tuple[Tensor, Tensor]`, `-> list[torch.Tensor]`) or a module (`-> nn.Module`); None
        otherwise."""
        if self._is_tensor_annotation(ann):
            return V_TENSOR
        if type(ann) in (cst.Name, cst.Attribute) and (self.qualname(ann) in MODULE_BASES or self.qualname(ann)
                                                        in MODEL_BASES):
            return V_MODEL  # `-> nn.Module`: whatever the body returns, a module
        if type(ann) is cst.Subscript:
            head = (self.qualname(ann.value) or "").rsplit(".", 1)[-1].lower()
            if head in ("dict", "list", "tuple", "sequence", "mapping", "iterable"):
                parts = [el.slice.value for el in ann.slice if type(el.slice) is cst.Index]
                if parts and self._is_tensor_annotation(parts[-1] if head in ("dict", "mapping") else parts[0]):
                    return V_SEQ_TENSOR
        return None

    def _enter_lambda(self, node: cst.Lambda) -> None:
        parent = self.function
        outer = self.here() if id(node) in self._arg_lambdas else None
        qual = f"{parent.qual}.<lambda>" if parent.qual else "<lambda>"
        fid = self.lambda_id(node)
        scope = Scope("function", node, "<lambda>", self.scope, fid=fid)
        scope.qual = qual
        scope.if_depth = len(self.if_branches)
        scope.params = param_names(node)
        scope.pcounters = {}
        scope.outer_here = outer  # a lambda passed to a call runs where the call is
        for p in scope.params:
            scope.bindings[p.lstrip("*")] = Param(fid, p)
        self._push_scope(scope)
        self.all_functions.append(scope)
        self.blocks.append(Block("body", scope))

    def lambda_id(self, node: cst.Lambda) -> str:
        """The id of a lambda's function, made when it is first needed: a call's arguments are
        read (`model_wrapper(lambda x, t: net(x, t))`) before the walk enters the lambda."""
        fid = self._lambda_ids.get(id(node))
        if fid is None:
            parent = self.function
            fid = self._new_id(f"{parent.qual}.<lambda>" if parent.qual else "<lambda>")
            self._lambda_ids[id(node)] = fid
        return fid

    def _leave_lambda(self, node: cst.Lambda) -> None:
        scope = self.scopes[-1]
        scope.returns.append(self.value(node.body))
        self.blocks.pop()
        self._pop_scope()

    def _enter_yield(self, node) -> None:
        self.function.yields = True
        if len(self.function.yielded) < 8 and type(node.value) is not cst.From:
            self.function.yielded.append(self.value(node.value) if node.value is not None else V_NONE)
        loop = self.loop
        while loop is not None:
            loop.yields = True
            loop = loop.parent

    def _enter_return(self, node: cst.Return) -> None:
        fn = self.function
        fn.returns.append(self.value(node.value) if node.value is not None else V_NONE)
        fn.int_returns.append(int_seq_arity(self, node.value) if node.value is not None else 0)
        v = node.value
        if type(v) is cst.Subscript and type(v.value) is cst.Name and fn.kind == "function":
            scope = fn  # `return POLICY_LOSS_REGISTRY[name]`: a module-level registry's value
            while scope is not None and scope.kind == "function" and v.value.value not in scope.bindings:
                scope = scope.parent
            if scope is not None and scope.kind == "module":
                fn.registry_getter = v.value.value


def _annotated_name(ann: cst.BaseExpression) -> str:
    """`int` for `int`, `int | None`, `Optional[int]`; "" for anything else."""
    if type(ann) is cst.BinaryOperation and type(ann.operator) is cst.BitOr:
        sides = [a for a in (ann.left, ann.right) if not (type(a) is cst.Name and a.value == "None")]
        return _annotated_name(sides[0]) if len(sides) == 1 else ""
    if type(ann) is cst.Subscript and last_name(ann.value) == "Optional" and len(ann.slice) == 1 \
            and type(ann.slice[0].slice) is cst.Index:
        return _annotated_name(ann.slice[0].slice.value)
    return last_name(ann) or ""
