"""Counters held by another object, for HPU001: `inference_params.sequence_len_offset`, which a
decoding helper adds the new tokens' count to on every step, read as a KV-cache bound in the
attention layers (`memory[start:end]` with `start = inference_params.sequence_len_offset`).

Which attributes are counted is a project fact (``counter-attr``): some function adds an int to
it on instances of that class and does not reset it in the same function (a per-call offset that
a helper resets after its micro-batch loop is the same values every step, not a counter).
"""
from __future__ import annotations

import libcst as cst

MESSAGE = (
    "`{name}` counts steps on another object and becomes a constant in the graph ({where}): every "
    "step records a different graph, so the device compiles again every step ({why}). Keep the "
    "offset on the device (index with a device tensor, `index_copy_` at a device position) or use "
    "a fixed-size buffer read at a fixed position"
)


class ObjectCounters:
    """Names a function reads from an object's attribute, directly or through int arithmetic
    (`start = params.offset`, `end = start + k.size(0)`): name -> (object name, attribute)."""

    def __init__(self) -> None:
        self.aliases: dict = {}  # (id(function), name) -> (object, attr)

    def note_assign(self, fn, node: cst.Assign) -> None:
        for t in node.targets:
            if type(t.target) is not cst.Name:
                continue
            key = (id(fn), t.target.value)
            found = self.reads(fn, node.value)
            if len(found) == 1:
                self.aliases[key] = found[0]
            else:
                self.aliases.pop(key, None)

    def reads(self, fn, expr: cst.BaseExpression) -> list:
        """(object, attribute) pairs an index expression reads, through + and -."""
        out = []
        stack = [expr]
        while stack:
            n = stack.pop()
            tp = type(n)
            if tp is cst.Attribute and type(n.value) is cst.Name and n.value.value not in ("self", "cls"):
                out.append((n.value.value, n.attr.value))
            elif tp is cst.Name:
                hit = self.aliases.get((id(fn), n.value))
                if hit is not None:
                    out.append(hit)
            elif tp is cst.BinaryOperation and type(n.operator) in (cst.Add, cst.Subtract):
                stack += (n.left, n.right)
        return out


def slice_parts(node: cst.Subscript) -> list:
    """(part, where) for each index and slice bound of a subscript."""
    out = []
    for el in node.slice:
        s = el.slice
        if type(s) is cst.Index:
            out.append((s.value, "a tensor index"))
        else:
            out += [(p, "a slice bound") for p in (s.lower, s.upper) if p is not None]
    return out
