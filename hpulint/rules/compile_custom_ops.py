"""Project operators without a fake (meta) implementation, for HPU012.

An operator the file defines with ``torch.library`` (``Library(ns, "DEF").define("name(...)")``
or ``torch.library.define("ns::name", ...)``) and implements only for devices (``"CPU"``,
``"CUDA"``, ``"HPU"``...): Dynamo runs every call on fake tensors to learn the output's shape,
and with no fake implementation the call is a graph break ("Operator does not support running
with fake tensors"; measured on torch 2.13: 2 graphs, 1 break at the call). With
``torch.library.register_fake``/``impl_abstract``, an ``impl(..., "Meta")`` or a ``Composite*``
implementation, one graph. (A ``@torch.library.custom_op`` with no fake is an error at the first
call, not a break, and is not reported here.)
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import descendants, string_value

WHY = ("Dynamo runs the operator on fake tensors to learn its output's shape, and `{op}` has no fake "
       "implementation (\"Operator does not support running with fake tensors\")")
FIX = ("Register one: `@torch.library.register_fake(\"{op}\")` on a function that returns "
       "`torch.empty_like(...)`/`new_empty(...)` of the output's shape (or `lib.impl(\"{name}\", fn, \"Meta\")`)")
TRACEABLE_KEYS = ("meta", "compositeimplicitautograd", "compositeexplicitautograd")
FAKE_REGISTRARS = ("torch.library.register_fake", "torch.library.impl_abstract")


class CustomOps:
    """The operators the module defines, and whether each one can run on fake tensors. Computed
    once, from the whole module, when a call of `torch.ops.<ns>.<name>` is checked."""

    def __init__(self) -> None:
        self._ops: Optional[dict] = None  # "ns::name" -> True when it has a fake or composite kernel
        self._unknown = False  # a fake registered for a name not written out: trust every op

    def op_call(self, an, module: cst.Module, node: cst.Call) -> Optional[tuple]:
        """(what is said, why, fix, check) for `torch.ops.ns.name(...)` (or `.default(...)`)."""
        qn = an.qualname(node.func) or ""
        parts = qn.split(".")
        if len(parts) not in (4, 5) or parts[:2] != ["torch", "ops"] or (len(parts) == 5 and parts[4] != "default"):
            return None
        op = f"{parts[2]}::{parts[3]}"

        def check() -> bool:
            ops = self._scan(an, module)
            return not self._unknown and ops.get(op) is False

        return f"`{qn}(...)`", WHY.format(op=op), FIX.format(op=op, name=parts[3]), check

    def _scan(self, an, module: cst.Module) -> dict:
        if self._ops is not None:
            return self._ops
        ops: dict = {}
        libs: dict = {}  # name -> namespace of the torch.library.Library it is bound to
        calls = [n for n in descendants(module) if type(n) is cst.Call]
        for n in descendants(module):
            if type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Name \
                    and type(n.value) is cst.Call and (an.qualname(n.value.func) or "") == "torch.library.Library" \
                    and n.value.args:
                ns = string_value(n.value.args[0].value)
                if ns is not None:
                    libs[n.targets[0].target.value] = ns
        for c in calls:
            qn = an.qualname(c.func) or ""
            first = string_value(c.args[0].value) if c.args else None
            if type(c.func) is cst.Attribute and type(c.func.value) is cst.Name and c.func.value.value in libs:
                ns, method = libs[c.func.value.value], c.func.attr.value
                if method == "define" and first is not None:
                    ops.setdefault(f"{ns}::{first.split('(', 1)[0].strip()}", False)
                elif method == "impl" and first is not None:
                    key = string_value(c.args[2].value) if len(c.args) > 2 else None
                    if key is None or key.lower() in TRACEABLE_KEYS:
                        ops[f"{ns}::{first}"] = True
                elif method in ("_register_fake", "fallback"):
                    self._unknown = True
            elif qn == "torch.library.define" and first is not None:
                ops.setdefault(first, False)
            elif qn in FAKE_REGISTRARS or qn == "torch.library.impl":
                key = string_value(c.args[1].value) if qn == "torch.library.impl" and len(c.args) > 1 else "Meta"
                if first is None:
                    self._unknown = True
                elif key is None or key.lower() in TRACEABLE_KEYS:
                    ops[first] = True
        self._ops = ops
        return ops
