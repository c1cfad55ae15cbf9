"""Per-op facts from the aten schema, computed once per overload."""
from __future__ import annotations

import torch

T, TL, S, OTHER = 0, 1, 2, 3  # tensor, tensor list, Scalar, anything else
OP, VIEW, ALIAS, READ, DYNAMIC = range(5)

_ALIAS_OPS = {"aten.detach.default", "aten.alias.default", "aten.lift_fresh.default"}
_READ_OPS = {"aten._local_scalar_dense.default", "aten.equal.default", "aten.is_nonzero.default"}
# Output shape depends on the data: PyTorch/XLA runs these on the CPU (no lowering by default).
_DYNAMIC_OPS = {
    "aten.nonzero.default", "aten.masked_select.default", "aten._unique2.default",
    "aten.unique_dim.default", "aten.unique_consecutive.default", "aten._unique.default",
    "aten.repeat_interleave.Tensor", "aten.bincount.default",
}
_NO_DEFAULT = object()


class OpInfo:
    __slots__ = ("name", "args", "kind", "mut", "nret", "ret_mut", "list_ret")

    def __init__(self, func):
        schema = func._schema
        self.name = str(func)
        args = []
        mut = []  # indexes of arguments the op writes to
        for i, a in enumerate(schema.arguments):
            t = str(a.type)
            if t in ("Tensor", "Optional[Tensor]"):
                k = T
            elif t.startswith("List[") and "Tensor" in t:
                k = TL
            elif t in ("number", "Optional[number]"):
                k = S
            else:
                k = OTHER
            default = a.default_value if a.has_default_value() else _NO_DEFAULT
            args.append((a.name, k, default))
            if a.alias_info is not None and a.alias_info.is_write:
                mut.append(i)
        self.args = tuple(args)
        self.mut = tuple(mut)
        self.nret = len(schema.returns)
        # return index -> argument index it aliases, for `Tensor(a!)` returns
        ret_mut = {}
        for r_i, r in enumerate(schema.returns):
            if r.alias_info is not None and r.alias_info.is_write:
                for a_i in mut:
                    if schema.arguments[a_i].alias_info.before_set == r.alias_info.before_set:
                        ret_mut[r_i] = a_i
        self.ret_mut = ret_mut
        self.list_ret = any(str(r.type).startswith("List[") for r in schema.returns)
        if self.name in _READ_OPS:
            self.kind = READ
        elif self.name in _DYNAMIC_OPS:
            self.kind = DYNAMIC
        elif self.name in _ALIAS_OPS:
            self.kind = ALIAS
        elif func.is_view and not mut:
            self.kind = VIEW
        else:
            self.kind = OP


_INFO: dict = {}


def _canon(v):
    t = type(v)
    if t in (int, float, bool, str) or v is None:
        return v
    if t in (list, tuple):
        return tuple(_canon(x) for x in v)
    if isinstance(v, torch.SymInt):
        return int(v)
    return str(v)
