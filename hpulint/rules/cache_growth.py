"""A key/value cache extended by concatenation on every call, for HPU003.

`k = torch.cat((past_key, k), dim=-2)` in an attention layer's forward(), where `past_key` comes
from the cache the caller passes back in (`layer_past`, `past_key_value`, `cache.cached_kv`,
`saved_state["prev_key"]`, `self._streaming_state["past_keys"]`): the cache is one position
longer on every decoding step, so every step records a graph with new shapes. The accumulator is
not a name re-assigned from itself in a loop, but state that goes round through the caller.
"""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import string_value

# methods whose result is the receiver's data, reshaped or cast (the cache is still the cache)
VIEWS = frozenset({"view", "reshape", "transpose", "permute", "unsqueeze", "squeeze", "flatten",
                   "unflatten", "expand", "type_as", "to", "contiguous", "detach", "clone", "float",
                   "half", "bfloat16", "type"})
_CACHE = re.compile(r"(^|_)(past|cache|cached)(_|$|s$)|^prev_(key|value|k|v)s?$|^(k|v|kv)_?cache", re.I)
_NOT_KV = re.compile(r"mask|len|pos|idx|index|size|offset|count", re.I)
# in-place writes at a position: a static cache's update (`past_key.index_copy_(2, pos, k)`)
IN_PLACE = frozenset({"index_copy_", "index_add_", "index_put_", "index_fill_", "scatter_", "copy_"})


def cache_name(name: str) -> bool:
    """`layer_past`, `past_key_value`, `past_kv`, `cache`, `kv_cache`, `prev_key`, `past_keys`;
    not a mask or a length kept with the cache (`past_mask`, `cache_len`)."""
    return bool(_CACHE.search(name)) and not _NOT_KV.search(name)


def cache_source(an, aliases: dict, expr: cst.BaseExpression) -> Optional[str]:
    """The cache-like name a piece of a concatenation is read from, through views, indexing,
    tuple unpacking and local names; None when it is not read from one."""
    fn = an.function
    for _ in range(8):
        tp = type(expr)
        if tp is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in VIEWS:
            expr = expr.func.value
        elif tp is cst.Subscript:
            if len(expr.slice) > 1 or type(expr.slice[0].slice) is cst.Slice:
                return None  # a window of the cache (`feat_cache[i][:, :, -1]`): a bounded size
            key = string_value(expr.slice[0].slice.value) if len(expr.slice) == 1 and \
                type(expr.slice[0].slice) is cst.Index else None
            if key is not None and cache_name(key):
                return key
            expr = expr.value
        elif tp is cst.Attribute:
            if cache_name(expr.attr.value):
                return expr.attr.value
            expr = expr.value
        elif tp is cst.Name:
            alias = aliases.get((id(fn), expr.value))
            if alias is not None:
                expr = alias
                continue
            return _from_value(an.value(expr))
        else:
            return None
    return None


def _from_value(v) -> Optional[str]:
    """The same question of what a local name was bound to (`past_key, past_value = layer_past`)."""
    for _ in range(8):
        tag = getattr(v, "tag", "")
        if tag == "elem":
            v = v.base
        elif tag == "meth" and v.name in VIEWS:
            v = v.base
        elif tag in ("attr", "param", "named"):
            if cache_name(v.name):
                return v.name
            if tag == "param":
                return None
            v = v.base
        else:
            return None
    return None


def static_write(an, aliases: dict, call: cst.Call) -> bool:
    """`past_key.index_copy_(2, token_idx - 1, k)`, `self.k_cache(k, 2, token_idx)`,
    `self.k_cache.update(...)`: the function also writes a preallocated cache in place, so its
    concatenation is the fallback for when no position is given (a static-shape decoder's default
    path does not grow)."""
    func = call.func
    if type(func) is not cst.Attribute:
        return False
    name = func.attr.value
    if name in IN_PLACE:
        return cache_source(an, aliases, func.value) is not None
    if cache_name(name):  # `self.k_cache(k, dim, idx)`: a cache module called with the new keys
        return True
    return name == "update" and type(func.value) is cst.Attribute and cache_name(func.value.attr.value)


def fed_back(an, node: cst.Assign) -> bool:
    """The assignment keeps a cache for the next call: `self.layer_past = presents`,
    `saved_state["prev_key"] = k`, `self._streaming_state["past_keys"] = k`, or, in a loop,
    `logits, kv_cache = model(x, past_kv=kv_cache)`. A file with none (an encoder written with a
    cache argument it is never given), or that keeps only a window of what it joined (a causal
    video decoder's last frames), does not grow one."""
    if type(node.value) is cst.Name and node.value.value == "None" or window(node.value):
        return False  # (`self.causal_cache = x[:, :, -1:].clone()`: the last frames, a fixed length)
    for t in node.targets:
        target = t.target
        if type(target) is cst.Attribute and cache_name(target.attr.value):
            return True
        if type(target) is cst.Subscript:
            key = string_value(target.slice[0].slice.value) if type(target.slice[0].slice) is cst.Index else None
            base = target.value
            if (key is not None and cache_name(key)) or (type(base) is cst.Name and cache_name(base.value)) \
                    or (type(base) is cst.Attribute and cache_name(base.attr.value)):
                return True
        if an.loop is not None and type(node.value) is cst.Call:
            names = [target] if type(target) is cst.Name else \
                [el.value for el in target.elements] if type(target) in (cst.Tuple, cst.List) else []
            if any(type(n) is cst.Name and cache_name(n.value) for n in names):
                return True
    return False


def window(value: cst.BaseExpression) -> bool:
    """The last positions of a tensor, through views (`x_pad[:, :, -1:].clone()`, `x[:, -2 * n:-n]`):
    a fixed length. (`nk[:, offset:]` drops the first `offset`: it may keep everything.)"""
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in VIEWS:
        value = value.func.value
    return type(value) is cst.Subscript and any(
        type(el.slice) is cst.Slice and _negative(el.slice.lower) for el in value.slice)


def _negative(bound) -> bool:
    """`-1`, `-n`, `-2 * n`: counted back from the end."""
    while type(bound) is cst.BinaryOperation and type(bound.operator) in (cst.Multiply, cst.FloorDivide):
        bound = bound.left
    return type(bound) is cst.UnaryOperation and type(bound.operator) is cst.Minus
