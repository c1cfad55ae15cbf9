"""The pending graph: values, nodes, canonical signatures and the cause of a recompilation.

Pure Python, no torch import: a node's op is a string, dtypes are whatever hashable object the
recorder passes (it passes ``torch.dtype``).

* ``Data`` is a value that lives on the device: an upload (``.to("hpu")``), a Python scalar
  passed as data (``xla`` profile), or a tensor materialised by an earlier graph execution.
* ``Node`` is one recorded aten op; ``Out(node, i)`` is its i-th output.
* ``Handle`` is what a device tensor points to: its current value, and for a view the base it
  aliases and the view ops that lead from the base to it.

A cut (step marker or host read) takes root values, walks their ancestors down to ``Data`` and
numbers everything in post-order: that canonical form is the graph's signature. Two graphs with
the same signature are the same compiled program.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


class Data:
    __slots__ = ("shape", "dtype", "origin", "name", "scalar", "loader")

    def __init__(self, shape, dtype, origin=None, name=None, scalar=False, loader=None):
        self.shape = shape  # tuple of ints
        self.dtype = dtype
        self.origin = origin  # (file, line) where it was produced or uploaded
        self.name = name  # a variable name the user knows it by, when we found one
        self.scalar = scalar  # a Python scalar passed as device data
        self.loader = loader  # (file, line) of the DataLoader whose batch was uploaded


class Node:
    __slots__ = ("op", "inputs", "consts", "file", "line", "bw", "os", "seq")

    def __init__(self, op, inputs, consts, file, line, bw=0, os=0, seq=0):
        self.op = op  # "aten.add.Tensor"
        self.inputs = inputs  # tuple of Data | Out
        self.consts = consts  # tuple: one entry per non-tensor argument (or a scalar marker)
        self.file = file  # first user-code frame that recorded it
        self.line = line
        self.bw = bw  # id of the backward pass that recorded it (0: not in backward)
        self.os = os  # id of the optimizer step that recorded it (0: not in a step)
        self.seq = seq


class Out:
    __slots__ = ("node", "idx")

    def __init__(self, node, idx=0):
        self.node = node
        self.idx = idx


class Handle:
    """The device-side identity of a tensor (shared by its aliases: detach, .data)."""

    __slots__ = ("value", "base", "chain", "seen", "version", "refs")

    def __init__(self, value, base=None, chain=(), seen=0):
        self.value = value
        self.base = base  # Handle of the storage this view aliases, or None
        self.chain = chain  # ((op, consts), ...) from the base to this view
        self.seen = seen  # base.version when value was computed
        self.version = 0  # bumped when a view writes into this base
        self.refs = []  # weak references to the tensors that carry this handle

    def alive(self) -> bool:
        for r in self.refs:
            if r() is not None:
                return True
        return False


SCALAR = ("scalar-data",)  # const placeholder where a Python scalar became a graph input


@dataclass
class Graph:
    """A cut graph in canonical form plus what is needed to explain it to a user."""

    signature: tuple
    nodes: list  # Node objects in canonical (post-order) order
    params: list  # Data objects in canonical order
    roots: tuple

    @property
    def size(self) -> int:
        return len(self.nodes)


def canonical(roots) -> Graph:
    """Canonical form of the graph that computes ``roots`` (a list of Data | Out values)."""
    index = {}  # Node -> position
    order = []
    for v in roots:
        if type(v) is not Out or v.node in index:
            continue
        stack = [[v.node, 0]]
        while stack:
            top = stack[-1]
            node, i = top
            ins = node.inputs
            n = len(ins)
            while i < n:
                x = ins[i]
                i += 1
                if type(x) is Out and x.node not in index:
                    top[1] = i
                    stack.append([x.node, 0])
                    break
            else:
                stack.pop()
                index[node] = len(order)
                order.append(node)
    pindex = {}
    params = []
    keys = []
    for node in order:
        refs = []
        for x in node.inputs:
            if type(x) is Out:
                refs.append((index[x.node], x.idx))
            else:
                p = pindex.get(x)
                if p is None:
                    p = pindex[x] = len(params)
                    params.append(x)
                refs.append(-1 - p)
        keys.append((node.op, tuple(refs), node.consts))
    root_refs = []
    for v in roots:
        if type(v) is Out:
            root_refs.append((index[v.node], v.idx))
        else:
            p = pindex.get(v)
            if p is None:
                p = pindex[v] = len(params)
                params.append(v)
            root_refs.append(-1 - p)
    signature = (
        tuple(keys),
        tuple((p.shape, p.dtype) for p in params),
        tuple(root_refs),
    )
    return Graph(signature=signature, nodes=order, params=params, roots=tuple(root_refs))


# ---------------------------------------------------------------------------------------------
# Why did a graph recompile? Compare it with the last graph executed at the same cut site.


def _short(op: str) -> str:
    return op[5:] if op.startswith("aten.") else op


def _const_change(old, new):
    """The differing entries of two consts tuples, as (old, new) values a user can read."""
    if len(old) != len(new):
        return old, new
    olds, news = [], []
    for a, b in zip(old, new):
        if a != b or type(a) is not type(b):
            olds.append(a)
            news.append(b)
    if len(olds) == 1:
        return olds[0], news[0]
    return tuple(olds), tuple(news)


def _first_consumer(graph: Graph, p: int):
    want = -1 - p
    for node, key in zip(graph.nodes, graph.signature[0]):
        if want in key[1]:
            return node
    return None


def _is_subsequence(small, big) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


def explain(old: Graph, new: Graph, carried: bool = False) -> dict:
    """The cause of compiling ``new`` when ``old`` ran at the same site before.

    Returns ``{"kind": ..., "changes": [...], "summary": str}`` with kind one of ``constant``
    (a constant of some op changed), ``shape`` (an input's shape or dtype changed), ``grew``
    (the graph is the old one plus more nodes), ``ops`` (a different op sequence), ``outputs``
    (same computation, different set of live outputs). ``carried``: the new graph holds ops
    recorded before the old one ran, i.e. work no step marker has cut.
    """
    okeys, nkeys = old.signature[0], new.signature[0]
    same_structure = len(okeys) == len(nkeys) and all(
        a[0] == b[0] and a[1] == b[1] for a, b in zip(okeys, nkeys)
    )
    if same_structure:
        changes = []
        for node, a, b in zip(new.nodes, okeys, nkeys):
            if a[2] != b[2]:
                ov, nv = _const_change(a[2], b[2])
                changes.append(
                    {"kind": "constant", "op": node.op, "file": node.file, "line": node.line,
                     "old": _jsonable(ov), "new": _jsonable(nv)}
                )
        for p, (oa, na) in enumerate(zip(old.signature[1], new.signature[1])):
            if oa != na:
                data = new.params[p]
                user = _first_consumer(new, p)
                what = "shape" if oa[0] != na[0] else "dtype"
                change = {"kind": "shape", "input": data.name or f"input {p}",
                          "op": user.op if user else None,
                          "file": user.file if user else None, "line": user.line if user else None,
                          "old": _jsonable(oa[0] if what == "shape" else oa[1]),
                          "new": _jsonable(na[0] if what == "shape" else na[1]), "what": what}
                if data.origin is not None:  # where the input was made (uploaded, computed)
                    change["from_file"], change["from_line"] = data.origin
                if data.loader is not None:  # the DataLoader whose batch it is
                    change["loader_file"], change["loader_line"] = data.loader
                changes.append(change)
        if len(old.signature[1]) != len(new.signature[1]):
            changes.append({"kind": "shape", "input": "inputs", "op": None, "file": None,
                            "line": None, "old": len(old.signature[1]),
                            "new": len(new.signature[1]), "what": "count"})
        if changes:
            kind = changes[0]["kind"]
            return {"kind": kind, "changes": changes, "summary": _summary(kind, changes)}
        return {"kind": "outputs", "changes": [],
                "summary": f"same computation, different live outputs "
                           f"({len(old.roots)} -> {len(new.roots)})"}
    oops = [k[0] for k in okeys]
    nops = [k[0] for k in nkeys]
    if len(nops) > len(oops) and _is_subsequence(oops, nops):
        grown = len(nops) - len(oops)
        extra = Counter((n.op, n.line) for n in new.nodes)
        extra.subtract(Counter((n.op, n.line) for n in old.nodes))
        added = sorted(((k, v) for k, v in extra.items() if v > 0), key=lambda kv: (-kv[1], kv[0][1]))
        lines = sorted({line for (_, line), _ in added if line})
        change = {"kind": "grew", "nodes": grown, "old_nodes": len(oops), "new_nodes": len(nops),
                  "lines": lines[:20], "carried": carried,
                  "added": [{"op": op, "line": line, "count": n} for (op, line), n in added[:10]]}
        what = ", ".join(f"{_short(op)} x{n} at line {line}" for (op, line), n in added[:3])
        why = " with no step marker" if carried else ""
        return {"kind": "grew", "changes": [change],
                "summary": f"graph grew by {grown} nodes ({len(oops)} -> {len(nops)}){why}: "
                           f"{what}" + (" ..." if len(added) > 3 else "")}
    first = next((i for i, (a, b) in enumerate(zip(oops, nops)) if a != b), min(len(oops), len(nops)))
    onode = old.nodes[first] if first < len(old.nodes) else None
    nnode = new.nodes[first] if first < len(new.nodes) else None
    change = {
        "kind": "ops", "index": first,
        "old_op": onode.op if onode else None, "old_line": onode.line if onode else None,
        "new_op": nnode.op if nnode else None, "new_line": nnode.line if nnode else None,
        "file": (nnode or onode).file if (nnode or onode) else None,
        "line": (nnode or onode).line if (nnode or onode) else None,
        "old_nodes": len(oops), "new_nodes": len(nops),
    }
    return {"kind": "ops", "changes": [change], "summary": _summary("ops", [change])}


def _summary(kind, changes) -> str:
    parts = []
    for c in changes[:4]:
        if c["kind"] == "constant":
            parts.append(f"constant changed: {_short(c['op'])} at line {c['line']}: "
                         f"{_fmt(c['old'])} -> {_fmt(c['new'])}")
        elif c["kind"] == "shape":
            if c["what"] == "count":
                parts.append(f"number of inputs changed: {c['old']} -> {c['new']}")
            else:
                where = f" ({_short(c['op'])} at line {c['line']})" if c["op"] else ""
                parts.append(f"input {c['what']} changed: {c['input']} {_fmt(c['old'])} -> "
                             f"{_fmt(c['new'])}{where}")
        elif c["kind"] == "ops":
            old = f"{_short(c['old_op'])} (line {c['old_line']})" if c["old_op"] else "end of graph"
            new = f"{_short(c['new_op'])} (line {c['new_line']})" if c["new_op"] else "end of graph"
            parts.append(f"different op sequence: node {c['index']} was {old}, now {new}")
    if len(changes) > 4:
        parts.append(f"and {len(changes) - 4} more")
    return "; ".join(parts)


def _fmt(v) -> str:
    if isinstance(v, list):
        return "(" + ", ".join(_fmt(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _jsonable(v):
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)
