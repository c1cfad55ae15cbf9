"""Where each node of a module is (line, column), as libcst's PositionProvider says, for less.

The provider regenerates the module's code and records a ``CodeRange`` for every node: the
syntactic range (``record_syntactic_position``), else the range of the code the node generated.
A file with findings needs a handful of those, and the provider's bookkeeping costs three times
the code generation itself: two ``CodePosition`` objects and a ``CodeRange`` per node, a regex
split per token, a generator-based context manager per syntactic range. The state below keeps
the same rules (it subclasses the provider's codegen state and only replaces that bookkeeping):
plain tuples per node, a split only for a token holding a newline, a small context manager; a
``CodeRange`` is made for a node when it is asked for.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

import libcst as cst
from libcst.metadata import CodePosition, CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState

_NEWLINE = re.compile(r"\r\n?|\n")  # as libcst splits a token


class Positions(Mapping):
    """node -> ``CodeRange`` (its syntactic range), for every node of the module."""

    __slots__ = ("_ranges",)

    def __init__(self, ranges: dict) -> None:
        self._ranges = ranges

    def __getitem__(self, node) -> CodeRange:
        (line, col), (end_line, end_col) = self._ranges[node]
        return CodeRange(CodePosition(line, col), CodePosition(end_line, end_col))

    def __contains__(self, node) -> bool:
        return node in self._ranges

    def __iter__(self):
        return iter(self._ranges)

    def __len__(self) -> int:
        return len(self._ranges)


def positions(module: cst.Module) -> Positions:
    state = _State(default_indent=module.default_indent, default_newline=module.default_newline,
                   provider=None)
    state.ranges = {}
    module._codegen(state)
    return Positions(state.ranges)


class _State(PositionProvidingCodegenState):
    ranges: dict  # node -> ((line, column), (end line, end column))

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            segments = _NEWLINE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def before_codegen(self, node) -> None:
        self._stack.append((self.line, self.column))

    def after_codegen(self, node) -> None:
        start = self._stack.pop()
        if node not in self.ranges:  # a syntactic range recorded inside the node stays
            self.ranges[node] = (start, (self.line, self.column))

    def record_syntactic_position(self, node, *, start_node=None, end_node=None) -> "_Syntactic":
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """The range of the code generated inside the ``with`` block, or from the start of
    ``start_node`` / to the end of ``end_node`` when given."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _State, node, start_node, end_node) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc) -> bool:
        state = self.state
        ranges = state.ranges
        start = ranges[self.start_node][0] if self.start_node is not None else self.start
        end = ranges[self.end_node][1] if self.end_node is not None else (state.line, state.column)
        ranges[self.node] = (start, end)
        return False
