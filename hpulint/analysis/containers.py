"""Containers a function fills: the dicts it makes (`{}`, `dict()`, `OrderedDict()`, a dict
comprehension) and stores that replace every element a container held (a loop over its own keys)."""
from __future__ import annotations

import libcst as cst


def new_dict(node: cst.BaseExpression) -> bool:
    """`{...}`, `dict()`, `OrderedDict()`: a dict this function fills."""
    if type(node) in (cst.Dict, cst.DictComp):
        return True
    return type(node) is cst.Call and not node.args and \
        (node.func.value if type(node.func) is cst.Name else node.func.attr.value
         if type(node.func) is cst.Attribute else "") in ("dict", "OrderedDict")


def every_element(an, target: cst.Subscript) -> bool:
    """`for name in grads: grads[name] = (grads[name] / n).cpu()`: a store at the top of the
    body of a loop over the container's own keys replaces every element it held."""
    loop = an.loop
    if loop is None or type(loop.node) is not cst.For or not an.blocks or an.blocks[-1] is not loop.block \
            or len(target.slice) != 1 or type(target.slice[0].slice) is not cst.Index:
        return False
    key, node = target.slice[0].slice.value, loop.node
    if type(key) is not cst.Name:
        return False
    it, first = node.iter, node.target
    if type(it) is cst.Call and type(it.func) is cst.Attribute and not it.args:
        method, it = it.func.attr.value, it.func.value
        if method == "items" and type(first) is cst.Tuple and first.elements:
            first = first.elements[0].value
        elif method != "keys":
            return False
    return type(it) is cst.Name and it.value == target.value.value and type(first) is cst.Name \
        and first.value == key.value
