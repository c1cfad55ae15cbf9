"""From an expression to its value (:mod:`hpulint.analysis.values`), at the point of the walk.

Names take the value of their current binding (so ``x = x.cpu()`` makes ``x`` a host value from
there on); torch, NumPy and builtin calls get their kind from tables; calls of project functions
and methods stay symbolic (``Ret``, ``Meth``) until the project is linked.
"""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from hpulint.analysis.names import LEGACY_TENSOR_TYPES, MASK_METHODS, is_tokenizer_name
from hpulint.analysis.syntax import STRINGS, last_name, names_in, string_value, target_names
from hpulint.analysis.values import (
    Arith, Attr, CallV, Choice, Elem, Join, LoaderAt, Marking, Meth, Named, Ret, RetOf, Sym, Tup, V_HOST, V_MASK,
    V_OTHER, V_SCALAR, V_SEQ, V_TENSOR, V_UNKNOWN, Val, join,
)

_NUMBER_BUILTINS = frozenset({"int", "float", "len", "round", "abs", "bool", "complex", "divmod", "hash"})
_SEQ_BUILTINS = frozenset({"range", "list", "tuple", "sorted", "reversed", "zip", "enumerate", "map",
                           "filter", "set", "frozenset"})
_OTHER_BUILTINS = frozenset({"dict", "str", "repr", "format", "isinstance", "issubclass", "hasattr",
                             "type", "print", "open", "id", "callable", "vars", "dir", "super",
                             "object", "slice", "bytes", "chr", "ord", "input"})
_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64", "float", "half", "double", "int8",
                     "int16", "int32", "int64", "long", "int", "bool", "uint8", "complex64", "float8_e4m3fn",
                     "float8_e5m2"})


def value(an, node: cst.BaseExpression) -> Val:
    """The value ``node`` holds at this point of the walk."""
    cache = an.value_cache
    hit = cache.get(id(node))
    if hit is not None:
        return hit
    v = _value(an, node)
    cache[id(node)] = v
    return v


def _value(an, node) -> Val:
    tp = type(node)
    if an.not_tensors and tp in (cst.Name, cst.Attribute, cst.Subscript) and any(an.not_tensors) \
            and an.known_not_tensor(node):
        return V_OTHER  # the else branch of `isinstance(x, torch.Tensor)`
    if tp is cst.Name:
        return an.lookup(node.value)
    if tp is cst.Call:
        return call_value(an, node)
    if tp is cst.Attribute:
        qn = an.qualname(node)
        if qn is not None and qn.startswith(("torch.", "numpy.", "math.")):
            return V_SCALAR if qn in ("torch.pi", "math.pi", "math.e", "numpy.pi") else V_OTHER
        if type(node.value) is cst.Name and node.value.value == "self":
            bound = an.function.self_binds.get(node.attr.value)
            if bound is not None:
                return bound
        return Attr(value(an, node.value), node.attr.value)
    if tp is cst.Subscript:
        base = value(an, node.value)
        if any(type(el.slice) is cst.Slice for el in node.slice):
            return base  # a slice of a tensor is a tensor, of a list a list
        if len(node.slice) == 1:
            key = node.slice[0].slice.value
            if type(key) is cst.SimpleString and _TEXT_KEY.search(key.value.strip("'\"")):
                return V_OTHER  # `batch["prompts"]`, `sample["file_name"]`: text, whatever holds it
            return Elem(base, _int_literal(key))
        return Elem(base)
    if tp is cst.BinaryOperation:
        return arith(value(an, node.left), value(an, node.right))
    if tp is cst.Comparison:
        ops = [c.operator for c in node.comparisons]
        if any(type(o) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for o in ops):
            return V_SCALAR
        if any(type(c.comparator) is cst.Name and c.comparator.value == "None" for c in node.comparisons):
            return V_SCALAR  # `t != None`: Python answers by identity, no tensor is read
        parts = (value(an, node.left), *(value(an, c.comparator) for c in node.comparisons))
        return Arith(parts, "cmp")
    if tp is cst.UnaryOperation:
        if type(node.operator) is cst.Not:
            return V_SCALAR
        if type(node.operator) is cst.BitInvert:
            return Arith((value(an, node.expression),), "invert")  # `~valid`: a mask's complement
        return value(an, node.expression)
    if tp is cst.BooleanOperation:
        return join((value(an, node.left), value(an, node.right)))
    if tp is cst.IfExp:
        return join((value(an, node.body), value(an, node.orelse)))
    if tp in (cst.Integer, cst.Float, cst.Imaginary):
        return V_SCALAR
    if tp in STRINGS:
        return V_OTHER
    if tp is cst.Tuple:
        if any(type(el) is cst.StarredElement for el in node.elements):
            return V_SEQ
        return Tup(tuple(value(an, el.value) for el in node.elements))
    if tp is cst.ListComp and not _reads_targets(node):
        # `[torch.zeros(n, device=d) for _ in range(world)]`: a list of that element
        return Tup((value(an, node.elt),))
    if tp in (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp):
        # `[l.item() for l in losses]`, `(p.grad.abs().max() for p in params)`: a list of
        # the element as it was while the comprehension's targets were bound
        elt = an.comp_elems.get(id(node))
        if elt is None or (elt.tag == "elem" and elt.base.tag == "k" and elt.base.kind not in ("tensor", "mask", "seq-tensor")):
            return V_SEQ  # (`[i for i in images]` of a list known to hold no tensors: a list)
        return Tup((elt,))
    if tp in (cst.List, cst.Set):
        return V_SEQ
    if tp is cst.Lambda:  # the lambda's own function: a call through it runs its body
        return Sym(an.lambda_id(node))
    if tp is cst.Dict:
        return _dispatch(an, node)
    if tp is cst.Ellipsis:
        return V_OTHER
    if tp is cst.NamedExpr:
        return value(an, node.value)
    if tp is cst.Await:
        return value(an, node.expression)
    return V_UNKNOWN


# keys that name text (a batch's prompts, file names, captions): their values are strings
_TEXT_KEY = re.compile(r"(?:^|_)(?:names?|prompts?|captions?|texts?|paths?|files?|filenames?|urls?|titles?|"
                       r"sentences?|questions?|answers?|strings?|str)$", re.I)


def _dispatch(an, node: cst.Dict) -> Val:
    """A dict whose values are all names (`{"heun": sample_heun, "dpm": sample_dpm}`, a registry
    of one `{"simple": noise_estimation_loss}`): a table of functions to pick from, if that is
    what the names turn out to be; any other dict is data."""
    els = node.elements
    if not els or len(els) > 16 or not all(
            type(el) is cst.DictElement and type(el.value) in (cst.Name, cst.Attribute) for el in els):
        return V_OTHER
    return Choice(tuple(value(an, el.value) for el in els))


def arith(a: Val, b: Val) -> Val:
    """``a op b``, flattened (a long sum stays one value), at most 8 parts."""
    parts = []
    for v in (a, b):
        if isinstance(v, Arith) and v.op == "arith":
            parts.extend(v.parts)
        elif v not in parts:
            parts.append(v)
    out = []
    for v in parts:
        if v not in out:
            out.append(v)
    return Arith(tuple(out[:8]))


def _int_literal(node) -> Optional[int]:
    if type(node) is cst.Integer:
        return int(node.evaluated_value)
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus \
            and type(node.expression) is cst.Integer:
        return -int(node.expression.evaluated_value)
    return None


def method_hint(an, call: cst.Call, name: str) -> str:
    """What a method's arguments say: "cpu" (moved to the host), "dtype" (only a dtype),
    "device" (moved somewhere else), "dims" (torch's `dim=`/`keepdim=`/`descending=` keywords,
    which NumPy spells `axis=`: a tensor method), "args" (other arguments), "" (none)."""
    if not call.args:
        return "device" if name == "cuda" else ""
    if name in ("to", "cuda", "type"):
        dtype_only = True
        for a in call.args:
            v = a.value
            if a.keyword is not None and a.keyword.value == "dtype":
                continue
            if a.keyword is not None and a.keyword.value not in ("device",):
                continue
            if is_cpu(an, v):
                return "cpu"
            if not _is_dtype(an, v):
                dtype_only = False
        return "dtype" if dtype_only else "device"
    if any(a.keyword is not None and a.keyword.value in _TORCH_DIM_KEYWORDS for a in call.args):
        return "dims"
    return "args"


_TORCH_DIM_KEYWORDS = frozenset({"dim", "keepdim", "descending"})


def is_cpu(an, node) -> bool:
    s = string_value(node)
    if s is not None:
        return s == "cpu" or s.startswith("cpu:")
    if type(node) is cst.Call and an.qualname(node.func) == "torch.device" and node.args:
        return is_cpu(an, node.args[0].value)
    if type(node) is cst.Name:
        # a name bound to the host device in this function or, unless bound here, an enclosing one
        scope = getattr(an, "function", None)
        while scope is not None:
            if scope.kind != "class":  # (a class body's names are not its methods')
                if node.value in scope.cpu_names:
                    return True
                if node.value in scope.bindings:
                    return False
            scope = scope.parent
    return False


def _is_dtype(an, node) -> bool:
    qn = an.qualname(node) if type(node) in (cst.Attribute, cst.Name) else None
    if qn and qn.startswith("torch.") and qn[6:] in _DTYPES:
        return True
    return type(node) is cst.Attribute and node.attr.value == "dtype"


def call_value(an, call: cst.Call) -> Val:
    func = call.func
    qn = an.qualname(func)
    if qn == "typing.cast" and len(call.args) == 2:
        # `cast(Decoder, self.model_parts[0])`: an instance of the class named (a project class's
        # methods then resolve), else the value itself
        kind = value(an, call.args[0].value)
        if isinstance(kind, Sym):
            return Ret(kind.ref)
        return V_TENSOR if an.qualname(call.args[0].value) == "torch.Tensor" else value(an, call.args[1].value)
    if qn is not None:
        v = build_calls.known_call(an, qn, call)
        if v is not None:
            return v
    if type(func) is cst.Attribute and type(func.value) in STRINGS:
        return V_OTHER  # `"{:.6E}".format(norm)`, `", ".join(names)`: a string (its reads are HPU005's)
    if type(func) is cst.Name and func.value not in an.bound_names():
        b = builtin_call(an, func.value, call)
        if b is not None:
            return b
    if type(func) is cst.Call and type(func.func) is cst.Name and func.func.value == "getattr" \
            and func.args and an.qualname(func.args[0].value) == "torch":
        # `getattr(torch, mode)(times)`: some torch function of the arguments
        return Arith(tuple(value(an, a.value) for a in call.args if a.keyword is None), "torch")
    if type(func) is cst.Attribute and func.attr.value in LEGACY_TENSOR_TYPES and type(func.value) is cst.Call \
            and (an.qualname(func.value.func) or "").rsplit(".", 1)[-1] == "get_accelerator":
        return V_TENSOR  # DeepSpeed's `get_accelerator().LongTensor(ids)`: made on the accelerator
    if type(func) is cst.Attribute and func.attr.value == "apply" and call.args \
            and (last_name(func.value) or "")[:1].isupper():
        # `AllReduce.apply(x.var(dim=1))`: an autograd Function (a class's `apply`), whose output
        # is a tensor when what it is given is
        return Arith(tuple(value(an, a.value) for a in call.args if a.keyword is None and not a.star), "torch")
    fv = value(an, func)
    if not (isinstance(fv, Sym) and ":" in fv.ref) and _returns_pt_tensors(call):
        # `processor(text=prompt, images=image, return_tensors="pt")`: a Hugging Face tokenizer,
        # processor or feature extractor, whatever its name; its tensors are made on the CPU
        return V_HOST
    if isinstance(fv, Sym):
        args = call.args
        if args and len(args) <= 6 and not any(a.star for a in args):
            return RetOf(fv.ref, tuple((a.keyword.value if a.keyword is not None else k, value(an, a.value))
                                       for k, a in enumerate(args)))
        return Ret(fv.ref)
    if isinstance(fv, Attr):
        wrapped = _wrapped_arguments(an, func, call)
        if wrapped is not None:
            return wrapped
        return Meth(fv.base, fv.name, method_hint(an, call, fv.name))
    if type(func) is cst.Name and is_tokenizer_name(func.value):
        # `tokenizer(prompt, ...)` with `tokenizer` a loop target or a parameter: the name says
        # what it returns when the project does not (see Resolver, "call")
        return CallV(Named(fv, func.value))
    return CallV(fv)


def _returns_pt_tensors(call: cst.Call) -> bool:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "return_tensors":
            return type(a.value) is cst.SimpleString and a.value.value.strip("'\"") == "pt"
    return False


# `fabric.setup(model, opt)`, `accelerator.prepare(model, opt, loader)`: the same objects back,
# wrapped, in the order given (Lightning Fabric, Hugging Face Accelerate)
_WRAPPERS = re.compile(r"(?:^|_)(?:fabric|accelerator)$", re.I)
_WRAP_METHODS = frozenset({"setup", "prepare", "setup_module", "setup_dataloaders", "prepare_model",
                           "prepare_optimizer", "prepare_data_loader", "unwrap_model"})


def _wrapped_arguments(an, func: cst.Attribute, call: cst.Call) -> Optional[Val]:
    if type(func) is not cst.Attribute or func.attr.value not in _WRAP_METHODS:
        return None
    receiver = last_name(func.value)
    if not receiver or not _WRAPPERS.search(receiver):
        return None
    args = [a for a in call.args if a.keyword is None and not a.star]
    if not args or len(args) != len([a for a in call.args if a.keyword is None]):
        return None
    vals = tuple(value(an, a.value) for a in args)
    if "xla" in an.evidence and "accelerator" in receiver.lower():
        # Accelerate on an XLA device wraps each prepared loader in its MpDeviceLoader wrapper,
        # which marks a step per batch
        vals = tuple(Marking(v) if _loader(v) else v for v in vals)
    return vals[0] if len(vals) == 1 else Tup(vals)


def _loader(v: Val) -> bool:
    while type(v) is Named:
        v = v.base
    return type(v) is LoaderAt


def builtin_call(an, name: str, call: cst.Call) -> Optional[Val]:
    args = [a for a in call.args if a.keyword is None]
    if name == "len":  # a tensor's length is its first size, not a value read from it
        return V_SCALAR
    if name in _NUMBER_BUILTINS:
        return Arith(tuple(value(an, a.value) for a in args[:1]), "num") if args else V_SCALAR
    if name in ("min", "max", "sum"):
        if len(args) == 1:
            # one of the elements (`max(p.grad.abs().max() for p in params)`: a tensor)
            return Elem(value(an, args[0].value)) if name != "sum" else Arith((Elem(value(an, args[0].value)),), "arith")
        return join(tuple(value(an, a.value) for a in args))
    if name in ("iter", "reversed"):  # (`reversed(t)` of a tensor is a flipped tensor)
        return value(an, args[0].value) if args else V_UNKNOWN
    if name == "next":
        return Elem(value(an, args[0].value)) if args else V_UNKNOWN
    if name == "getattr" and len(args) >= 2:
        attr = string_value(args[1].value)
        return Attr(value(an, args[0].value), attr) if attr else V_UNKNOWN
    if name in _SEQ_BUILTINS:
        return V_SEQ
    if name in _OTHER_BUILTINS:
        return V_OTHER
    return None


def _reads_targets(node: cst.ListComp) -> bool:
    """Does the element of the comprehension read a name its `for` clauses bind (or is it nested)?"""
    targets = set()
    clause = node.for_in
    while clause is not None:
        targets.update(target_names(clause.target))
        clause = clause.inner_for_in
    return bool(targets & set(names_in(node.elt))) or type(node.elt) in (cst.ListComp, cst.GeneratorExp)


def mask_value(v: Val) -> bool:
    """Structurally a boolean-mask candidate: a comparison, a mask function or method (whether
    it is a device tensor is decided when the project is linked)."""
    if v is V_MASK:
        return True
    if isinstance(v, Arith):
        # (`(u > 0) * (l == u)`, `valid & ~done`: masks combined are a mask)
        return v.op in ("cmp", "torchmask", "invert") or v.op == "arith" and all(mask_value(p) for p in v.parts)
    if isinstance(v, Meth):
        return v.name in MASK_METHODS
    if isinstance(v, Join):
        return any(mask_value(p) for p in v.parts)
    return False


from hpulint.analysis import build_calls  # noqa: E402  (its tables ask value() back)
