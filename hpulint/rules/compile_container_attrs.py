"""A set, list or dict attribute of a compiled module changed between its calls, for HPU016.

Measured on torch 2.13 (CPU, ``eager`` backend): a residual MLP whose compiled ``forward`` tests
``if i in self.frozen:`` while the training loop adds the next block's index to ``model.frozen``
each epoch (progressive freezing) compiles again after every change: 5 epochs, 5 graphs, 4
recompiles. Dynamo guards on a Python container's contents (its length, its items, its keys) when
the traced code reads it. The same flags kept in a boolean tensor buffer updated in place, or a
container changed once before the loop, cost no recompile.
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import code

MUTATORS = frozenset({"add", "append", "extend", "insert", "update", "setdefault", "appendleft"})
MESSAGE = (
    "`{stmt}` in the loop changes `{inst}.{attr}`, a Python container that {cls}.forward() reads, between calls "
    "of the compiled `{compiled}`: Dynamo guards on the contents of a container the traced code reads (its "
    "length, items or keys), so each change compiles forward again, and after `recompile_limit` ({limit}) "
    "Dynamo runs it eagerly for the rest of the run (eager fallback). Keep the flags in a tensor buffer "
    "updated in place (`self.frozen_mask[i] = True`), or settle the container before the loop"
)


def mutation(node: cst.Call):
    """(instance name, attribute) for `model.frozen.add(k)`, else None."""
    func = node.func
    if type(func) is not cst.Attribute or func.attr.value not in MUTATORS:
        return None
    held = func.value
    if type(held) is cst.Attribute and type(held.value) is cst.Name and held.value.value != "self":
        return held.value.value, held.attr.value
    return None


def container_findings(mutations: list, loop_calls: list, compiled_of: dict, built: dict, reads: dict,
                       limit: int) -> list:
    """(call, message) for each mutation (call, instance, attr, loop) of an attribute the class's
    forward reads, in a loop around calls of that instance compiled."""
    out = []
    for node, inst, attr, loop in mutations:
        cls = next((c for c in sorted(built.get(inst, ())) if (c, attr) in reads), None)
        if cls is None:
            continue
        calls = [(callee, call) for callee, where, call in loop_calls
                 if compiled_of.get(callee) == inst and any(lp is loop for lp in where.chain())]
        if calls:
            out.append((calls[0][1], MESSAGE.format(stmt=code(node), inst=inst, attr=attr, cls=cls,
                                                    compiled=calls[0][0], limit=limit)))
    return out
