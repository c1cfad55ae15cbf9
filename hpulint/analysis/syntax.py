"""Small pure helpers on libcst nodes: dotted names, source text, the names an expression reads."""
from __future__ import annotations

import dataclasses
import re
from typing import Iterator, Optional

import libcst as cst

# libcst's node classes are ABCs: an isinstance() test that fails runs ABCMeta.__instancecheck__
# (a Python call). The helpers below, called for most nodes of every file, test the exact class
# (libcst's concrete node classes have no subclasses) and look the rest up in a table.
_Name = cst.Name
_Attribute = cst.Attribute
_NODE_CLASSES: dict = {}  # class -> whether it is a libcst node


# string literals of any form (a plain, implicitly concatenated or f-string)
STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def is_node_class(cls) -> bool:
    known = _NODE_CLASSES.get(cls)
    if known is None:
        known = _NODE_CLASSES[cls] = issubclass(cls, cst.CSTNode)
    return known


def dotted(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while type(node) is _Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is _Name:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


_EMPTY = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    """The source text of a node."""
    text = _plain_dotted(node)
    return text if text is not None else _EMPTY.code_for_node(node)


def one_line(node: cst.CSTNode, width: int = 0) -> str:
    """The source text of a node on one line, cut to ``width`` characters (" ..." at the end)."""
    text = " ".join(code(node).split())
    return text if not width or len(text) <= width else text[:width - 4] + " ..."


def short(node: cst.CSTNode, width: int) -> str:
    """The source text of a node when it fits on one line in ``width`` characters, else "..."."""
    text = code(node)
    return text if "\n" not in text and len(text) <= width else "..."


def bound_arguments(call: cst.Call, params: list) -> Optional[list]:
    """(parameter name or None, argument expression) for each argument of ``call``, positional ones
    bound to ``params`` in order; None when a `*args`/`**kwargs` argument makes the binding unknown."""
    out, k = [], 0
    for a in call.args:
        if a.star:
            return None
        if a.keyword is not None:
            out.append((a.keyword.value, a.value))
        else:
            out.append((params[k] if k < len(params) else None, a.value))
            k += 1
    return out


def loop_head(node, width: int = 0) -> str:
    """`for x in xs` / `while test` of a loop node, for messages ("the loop" for anything else)."""
    if type(node) is cst.For:
        return f"for {code(node.target)} in {one_line(node.iter, width)}"
    if type(node) is cst.While:
        return f"while {one_line(node.test, width)}"
    return "the loop"


def _plain_dotted(node) -> Optional[str]:
    """The text of a name or dotted name written without parentheses, spaces or comments (most
    of what the rules quote), without generating code; None for anything else."""
    parts = []
    while type(node) is _Attribute:
        dot = node.dot
        if node.lpar or not (_no_space(dot.whitespace_before) and _no_space(dot.whitespace_after)):
            return None
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not _Name or node.lpar:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _no_space(ws) -> bool:
    return type(ws) is cst.SimpleWhitespace and ws.value == ""


def last_name(node: cst.BaseExpression) -> Optional[str]:
    tp = type(node)
    if tp is _Name:
        return node.value
    if tp is _Attribute:
        return node.attr.value
    return None


# the fields of a node that can hold code: not whitespace, punctuation or comments
_NOT_CODE = re.compile(
    r"whitespace|^lpar$|^rpar$|comma|semicolon|leading_lines|lines_after_decorators|^header$|"
    r"^footer$|^operator$|^equal$|^dot$|^colon$|bracket|brace|^star$|^asynchronous$|^relative$|"
    r"^first_colon$|^second_colon$|^indent$|^encoding$|^default_"
)
CHILD_FIELDS: dict = {}  # node type -> its fields that can hold code


def root_name(node: cst.BaseExpression) -> Optional[str]:
    """The name an attribute or subscript chain starts from: `d` of `d["ids"]`, `data[1][0]`,
    `batch.input_ids`."""
    while type(node) in (cst.Subscript, cst.Attribute):
        node = node.value
    return node.value if type(node) is cst.Name else None


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
    nodes = _NODE_CLASSES
    for name in CHILD_FIELDS.get(tp) or child_fields(tp):
        value = getattr(node, name)
        cls = value.__class__
        if nodes.get(cls) or (cls not in nodes and is_node_class(cls)):
            out.append(value)
        elif cls is tuple or cls is list:
            out += [c for c in value if nodes.get(c.__class__) or is_node_class(c.__class__)]
    return out


_EXPR_FIELDS: dict = {}
_SKIP_FIELD = re.compile(r"whitespace|^lpar$|^rpar$|comma|^operator$|^equal$|^dot$|^colon$|bracket|brace|^star$")


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and every node under it, in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack += reversed(child_nodes(n))


def _expr_fields(tp) -> tuple:
    fields = tuple(f.name for f in dataclasses.fields(tp) if not _SKIP_FIELD.search(f.name))
    _EXPR_FIELDS[tp] = fields
    return fields


_Arg = cst.Arg
_NO_NAMES = frozenset({cst.Lambda, cst.SimpleString, cst.Integer, cst.Float})


def names_in(node: cst.CSTNode) -> Iterator[str]:
    """Every Name read in an expression (not attribute names, not keyword names, not lambdas)."""
    nodes = _NODE_CLASSES
    stack = [node]
    while stack:
        n = stack.pop()
        tp = n.__class__
        if tp is _Name:
            yield n.value
        elif tp is _Attribute or tp is _Arg:
            stack.append(n.value)
        elif tp in _NO_NAMES:
            continue
        elif nodes.get(tp) or (tp not in nodes and is_node_class(tp)):
            for f in _EXPR_FIELDS.get(tp) or _expr_fields(tp):
                v = getattr(n, f)
                cls = v.__class__
                if nodes.get(cls) or (cls not in nodes and is_node_class(cls)):
                    stack.append(v)
                elif cls is tuple or cls is list:
                    stack.extend(c for c in v if nodes.get(c.__class__) or is_node_class(c.__class__))


def target_names(target: cst.BaseExpression) -> list:
    """The plain names an assignment or loop target binds (`a`, `a, (b, c)`)."""
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        out = []
        for el in target.elements:
            out.extend(target_names(el.value))
        return out
    if type(target) is cst.StarredElement:
        return target_names(target.value)
    return []


def param_names(fn: cst.CSTNode) -> list:
    if type(fn) not in (cst.FunctionDef, cst.Lambda):
        return []
    p = fn.params
    out = [x.name.value for x in (*p.posonly_params, *p.params)]
    if type(p.star_arg) is cst.Param:
        out.append("*" + p.star_arg.name.value)
    out += [x.name.value for x in p.kwonly_params]
    if p.star_kwarg is not None:
        out.append("**" + p.star_kwarg.name.value)
    return out


def is_true(node: Optional[cst.BaseExpression]) -> bool:
    return type(node) is cst.Name and node.value == "True"


def argument(call: cst.Call, pos: Optional[int], name: str) -> Optional[cst.BaseExpression]:
    """The argument given by keyword ``name``, else the positional one at ``pos`` (None, or a
    negative index: keyword only), else None."""
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[pos].value if pos is not None and 0 <= pos < len(positional) else None


def keyword(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    return None


def string_value(node: cst.BaseExpression) -> Optional[str]:
    if type(node) is cst.SimpleString:
        try:
            value = node.evaluated_value
        except Exception:  # pragma: no cover - malformed literal
            return None
        return value if isinstance(value, str) else None
    return None
