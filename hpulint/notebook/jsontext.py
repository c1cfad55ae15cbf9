"""The notebook file as text: where each cell's ``source`` sits, and how to write a new one there.

A fixed notebook is written by replacing only the changed cells' ``source`` values in the
original text, so everything else (outputs, metadata, key order, indentation, escaping, the
final newline) stays byte for byte what it was. The standard library's ``json`` checks the file
and gives clear errors; this module finds the byte spans (JSON strings are read with json's own
``scanstring``, so large outputs cost little).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:Infinity|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|NaN")


@dataclass
class SourceSpan:
    start: int  # of the value ("..." or [...]) in the text
    end: int
    items: list = field(default_factory=list)  # (start, end) of each string when a list
    is_list: bool = True


class _Scanner:
    """A JSON reader that records the spans of ``cells[k].source`` (the file already parsed
    with ``json.loads``, so this one need not report errors well)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.sources: dict = {}  # cell index (0-based) -> SourceSpan

    def skip(self, i: int) -> int:
        return _WS.match(self.text, i).end()

    def value(self, i: int, path: tuple) -> int:
        t = self.text
        i = self.skip(i)
        c = t[i]
        if c == "{":
            return self._object(i, path)
        if c == "[":
            return self._array(i, path)
        if c == '"':
            return scanstring(t, i + 1)[1]
        for word in ("true", "false", "null"):
            if t.startswith(word, i):
                return i + len(word)
        m = _NUMBER.match(t, i)
        if m is None:
            raise ValueError(f"unexpected {c!r} at offset {i}")
        return m.end()

    def _object(self, i: int, path: tuple) -> int:
        t = self.text
        i = self.skip(i + 1)
        if t[i] == "}":
            return i + 1
        while True:
            key, i = scanstring(t, self.skip(i) + 1)
            i = self.skip(i)  # at ':'
            start = self.skip(i + 1)
            sub = path + (key,)
            if len(sub) == 3 and sub[0] == "cells" and key == "source":
                span = SourceSpan(start, 0, is_list=t[start] == "[")
                self.sources[sub[1]] = span
                end = self._array(start, sub, span.items) if span.is_list else self.value(start, sub)
                span.end = end
            else:
                end = self.value(start, sub)
            i = self.skip(end)
            if t[i] == "}":
                return i + 1
            i += 1  # ','

    def _array(self, i: int, path: tuple, items=None) -> int:
        t = self.text
        i = self.skip(i + 1)
        if t[i] == "]":
            return i + 1
        k = 0
        while True:
            start = self.skip(i)
            end = self.value(start, path + (k,))
            if items is not None:
                items.append((start, end))
            i = self.skip(end)
            if t[i] == "]":
                return i + 1
            i += 1
            k += 1


def source_spans(text: str) -> dict:
    """Cell index (0-based, over all cells) -> the SourceSpan of its ``source``."""
    scanner = _Scanner(text)
    scanner.value(0, ())
    return scanner.sources


class Style:
    """How this file writes JSON: ASCII escapes or not, and its indentation."""

    def __init__(self, text: str) -> None:
        self.text = text
        # nbformat writes UTF-8 as is; a file with \\u escapes for non-ASCII was written by
        # json.dump's default (ensure_ascii=True)
        self.ensure_ascii = not any(ord(c) > 127 for c in text) and bool(
            re.search(r"\\u00[89a-fA-F][0-9a-fA-F]|\\u0[1-9a-fA-F][0-9a-fA-F]{2}|\\u[1-9a-fA-F][0-9a-fA-F]{3}", text))
        self.newline = "\r\n" if "\r\n" in text else "\n"

    def string(self, s: str) -> str:
        return json.dumps(s, ensure_ascii=self.ensure_ascii)

    def source(self, new_text: str, span: SourceSpan) -> str:
        """The JSON for ``new_text`` in the form and layout ``span`` had."""
        if not span.is_list:
            return self.string(new_text)
        parts = new_text.splitlines(True)  # how Jupyter stores a cell's lines
        if not parts:
            return "[]"
        opening, separator, closing = self._list_layout(span)
        return "[" + opening + separator.join(self.string(p) for p in parts) + closing + "]"

    def _list_layout(self, span: SourceSpan) -> tuple:
        t = self.text
        items = span.items
        if items:
            opening = t[span.start + 1: items[0][0]]
            closing = t[items[-1][1]: span.end - 1]
            separator = t[items[0][1]: items[1][0]] if len(items) > 1 else "," + opening
            return opening, separator, closing
        # an empty list: indent one level deeper than the line that holds "source"
        line_start = t.rfind("\n", 0, span.start) + 1
        key_indent = t[line_start: line_start + len(t[line_start:]) - len(t[line_start:].lstrip(" \t"))]
        if "\n" not in t:
            return "", ", ", ""
        unit = _indent_unit(t)
        opening = self.newline + key_indent + unit
        return opening, "," + opening, self.newline + key_indent


def _indent_unit(text: str) -> str:
    m = re.search(r"\n([ \t]+)\S", text)
    return m.group(1) if m else " "
