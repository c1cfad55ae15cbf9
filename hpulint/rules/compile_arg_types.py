"""An argument of a compiled function given values of three or more Python types, for HPU017.

Dynamo guards on the type of every Python value a frame receives: a list, a tuple and a
``torch.Size`` given as ``size=`` (``F.interpolate``), a ``torch.device``, a device string and
``None`` given as ``device=``, an int, a float and a 0-d tensor given as a temperature: each new
type fails the guard and compiles the function again. Measured on torch 2.13 (CPU, ``eager``
backend): three types in turn, two recompiles (two types, one: Dynamo's allowance, not reported).

Each call site of a compiled function in the file is read once, statically: a literal (``[h, w]``,
``(64, 64)``, ``7``, ``0.5``, ``"cpu"``, ``None``), a name bound to one in the same scope, a dict
literal's entry (``config["device"]`` after ``config = {"device": "cpu"}``), ``x.shape``/``x.size()``
and a slice of one (a ``torch.Size``), ``x.device`` or ``torch.device(...)``, ``torch.tensor(...)``;
a parameter left out gives its default. Anything else is unknown and says nothing.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import argument, code, descendants
from hpulint.rules.compiled_region import recompiles_text

MESSAGE = ("The compiled `{fn}` is called with `{param}` as {kinds}: Dynamo guards on the type of each Python "
           "argument, so each new type compiles it again: {count}. Pass one type everywhere, converted before the "
           "call (`tuple(size)`, `torch.device(device)`, `float(t)`)")


def _literal_kind(node) -> Optional[str]:
    tp = type(node)
    if tp in (cst.List, cst.ListComp):
        return "a list"
    if tp is cst.Tuple:
        return "a tuple"
    if tp is cst.Integer:
        return "an int"
    if tp is cst.Float:
        return "a float"
    if tp in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString):
        return "a str"
    if tp is cst.Name and node.value == "None":
        return "None"
    if tp is cst.Name and node.value in ("True", "False"):
        return "a bool"
    if tp is cst.UnaryOperation and type(node.expression) in (cst.Integer, cst.Float):
        return _literal_kind(node.expression)
    return None


def _kind(node, names: dict) -> Optional[str]:
    """The Python type of an argument expression, or None when it is not known."""
    got = _literal_kind(node)
    if got is not None:
        return got
    tp = type(node)
    if tp is cst.Name:
        return names.get(node.value)
    if tp is cst.Attribute:
        if node.attr.value == "shape":
            return "a torch.Size"
        if node.attr.value == "device":
            return "a torch.device"
        return None
    if tp is cst.Subscript:
        base = node.value
        if type(base) is cst.Attribute and base.attr.value == "shape" and \
                any(type(e.slice) is cst.Slice for e in node.slice):
            return "a torch.Size"  # `images.shape[-2:]`
        if type(base) is cst.Name and base.value in names and names[base.value].startswith("dict:"):
            key = node.slice[0].slice.value if len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index else None
            if type(key) is cst.SimpleString:
                return names.get(f"{base.value}[{key.evaluated_value}]")
        return None
    if tp is cst.Call:
        name = code(node.func)
        if name.endswith(".size") and not node.args:
            return "a torch.Size"
        if name in ("torch.device",):
            return "a torch.device"
        if name in ("torch.tensor", "torch.as_tensor", "torch.scalar_tensor"):
            return "a tensor"
    return None


def _kinds(node, names: dict, walked: dict) -> tuple:
    """The types an argument can have at one call: one, or each entry's type for `body["key"]`
    where `body` walks a list of dict literals (`for body in requests:`)."""
    if node is None:
        return ()
    if type(node) is cst.Subscript and type(node.value) is cst.Name and node.value.value in walked \
            and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index \
            and type(node.slice[0].slice.value) is cst.SimpleString:
        return names.get(f"{walked[node.value.value]}[*][{node.slice[0].slice.value.evaluated_value}]", ())
    got = _kind(node, names)
    return (got,) if got is not None and not got.startswith(("dict:", "dicts:")) else ()


def _names(module: cst.Module) -> dict:
    """Names bound at one place in the file to a value of known type (and a dict literal's string
    entries); a name bound twice to different types is unknown."""
    out: dict = {}
    seen: dict = {}
    for n in descendants(module):
        if type(n) is not cst.Assign or len(n.targets) != 1 or type(n.targets[0].target) is not cst.Name:
            continue
        name = n.targets[0].target.value
        if type(n.value) is cst.Dict:
            kind = "dict:"
            for el in n.value.elements:
                if type(el) is cst.DictElement and type(el.key) is cst.SimpleString:
                    got = _kind(el.value, out)
                    if got is not None:
                        out[f"{name}[{el.key.evaluated_value}]"] = got
        elif type(n.value) is cst.List and n.value.elements and all(type(e.value) is cst.Dict for e in n.value.elements):
            kind = "dicts:"  # `requests = [{"temperature": 1}, {"temperature": 0.7}, ...]`: each entry's types
            for el in n.value.elements:
                for entry in el.value.elements:
                    if type(entry) is cst.DictElement and type(entry.key) is cst.SimpleString:
                        got = _kind(entry.value, out)
                        key = f"{name}[*][{entry.key.evaluated_value}]"
                        out[key] = (out.get(key) or ()) + ((got,) if got and got not in out.get(key, ()) else ())
        else:
            kind = _kind(n.value, out)
        seen[name] = seen.get(name, 0) + 1
        if kind is None or seen[name] > 1 and out.get(name) != kind:
            out.pop(name, None)
            seen[name] = 99
        elif seen[name] < 99:
            out[name] = kind
    return out


def argument_types(module: cst.Module, compiled, definition, limit: int) -> list:
    """[(call, message)] for each compiled function of the file with a parameter given three or
    more types across its call sites (``definition(callee)``: (FunctionDef, skipped parameters))."""
    sites: dict = {}
    for n in descendants(module):
        if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value in compiled:
            sites.setdefault(n.func.value, []).append(n)
    if not sites:
        return []
    names = _names(module)
    walked: dict = {}  # id(call) -> {loop variable: the list of dicts it walks}
    for n in descendants(module):
        if type(n) is cst.For and type(n.target) is cst.Name and type(n.iter) is cst.Name \
                and names.get(n.iter.value) == "dicts:":
            for c in descendants(n.body):
                if type(c) is cst.Call:
                    walked.setdefault(id(c), {})[n.target.value] = n.iter.value
    out = []
    for callee, calls in sites.items():
        fn, skip = definition(callee)
        if fn is None:
            continue
        params = [*fn.params.posonly_params, *fn.params.params][skip:]
        for i, p in enumerate(params):
            kinds: dict = {}
            for call in calls:
                arg = argument(call, i, p.name.value)
                if arg is None and any(a.star for a in call.args):
                    kinds = {}
                    break
                for got in _kinds(arg if arg is not None else p.default, names, walked.get(id(call), {})):
                    kinds.setdefault(got, call)
            if len(kinds) >= 3:
                listed = list(kinds)
                text = ", ".join(listed[:-1]) + f" and {listed[-1]}"
                out.append((list(kinds.values())[-1], MESSAGE.format(
                    fn=callee, param=p.name.value, kinds=text, count=recompiles_text(len(kinds), limit, "types"))))
                break
    return out
