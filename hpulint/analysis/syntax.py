"""Small pure helpers on libcst nodes: dotted names, source text, the names an expression reads."""
from __future__ import annotations

import dataclasses
import re
from typing import Iterator, Optional

import libcst as cst

def dotted(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


_EMPTY = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    """The source text of a node."""
    return _EMPTY.code_for_node(node)


def last_name(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


# the fields of a node that can hold code: not whitespace, punctuation or comments
_NOT_CODE = re.compile(
    r"whitespace|^lpar$|^rpar$|comma|semicolon|leading_lines|lines_after_decorators|^header$|"
    r"^footer$|^operator$|^equal$|^dot$|^colon$|bracket|brace|^star$|^asynchronous$|^relative$|"
    r"^first_colon$|^second_colon$|^indent$|^encoding$|^default_"
)
CHILD_FIELDS: dict = {}  # node type -> its fields that can hold code


def child_fields(tp) -> tuple:
    names = CHILD_FIELDS.get(tp)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(tp) if not _NOT_CODE.search(f.name))
        CHILD_FIELDS[tp] = names
    return names


def child_nodes(node: cst.CSTNode) -> list:
    """The node's children that can hold code, in field order: a cheap ``node.children`` for
    searches (libcst's builds a copy of the node, and includes whitespace and punctuation)."""
    out = []
    tp = type(node)
    for name in CHILD_FIELDS.get(tp) or child_fields(tp):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            out.append(value)
        elif value.__class__ in (list, tuple):
            out += [c for c in value if isinstance(c, cst.CSTNode)]
    return out


_EXPR_FIELDS: dict = {}
_SKIP_FIELD = re.compile(r"whitespace|^lpar$|^rpar$|comma|^operator$|^equal$|^dot$|^colon$|bracket|brace|^star$")


def _expr_fields(tp) -> tuple:
    fields = tuple(f.name for f in dataclasses.fields(tp) if not _SKIP_FIELD.search(f.name))
    _EXPR_FIELDS[tp] = fields
    return fields


def names_in(node: cst.CSTNode) -> Iterator[str]:
    """Every Name read in an expression (not attribute names, not keyword names, not lambdas)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            yield n.value
        elif isinstance(n, cst.Attribute):
            stack.append(n.value)
        elif isinstance(n, cst.Arg):
            stack.append(n.value)
        elif isinstance(n, (cst.Lambda, cst.SimpleString, cst.Integer, cst.Float)):
            continue
        elif isinstance(n, cst.CSTNode):
            for f in _EXPR_FIELDS.get(type(n)) or _expr_fields(type(n)):
                v = getattr(n, f)
                if isinstance(v, cst.CSTNode):
                    stack.append(v)
                elif isinstance(v, (list, tuple)):
                    stack.extend(c for c in v if isinstance(c, cst.CSTNode))


def target_names(target: cst.BaseExpression) -> list:
    """The plain names an assignment or loop target binds (`a`, `a, (b, c)`)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        out = []
        for el in target.elements:
            out.extend(target_names(el.value))
        return out
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


def param_names(fn: cst.CSTNode) -> list:
    if not isinstance(fn, (cst.FunctionDef, cst.Lambda)):
        return []
    p = fn.params
    out = [x.name.value for x in (*p.posonly_params, *p.params)]
    if isinstance(p.star_arg, cst.Param):
        out.append("*" + p.star_arg.name.value)
    out += [x.name.value for x in p.kwonly_params]
    if p.star_kwarg is not None:
        out.append("**" + p.star_kwarg.name.value)
    return out


def is_true(node: Optional[cst.BaseExpression]) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def keyword(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    return None


def string_value(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:  # pragma: no cover - malformed literal
            return None
        return value if isinstance(value, str) else None
    return None
