"""hpulint.positions gives every node the range libcst's PositionProvider gives it."""
from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from fixture_format import ROOT
from hpulint.engine import parse_module
from hpulint.positions import positions

FILES = sorted((ROOT / "fixtures").rglob("*.py")) + sorted((ROOT / "hpulint").rglob("*.py"))

SAMPLES = {
    "crlf": "def f(x):\r\n    if x:\r\n        return (x +\r\n                1)\r\n",
    "continuation": "y = 1 + \\\n    2\nz = [\n  a,  # c\n]\n",
    "decorators": "@d\n\n@e(1)\nclass C(B, metaclass=M):\n    '''doc'''\n    x: int = 3\n",
    "strings": 'a = f"{x!r:>{w}}" "b" \'\'\'\nc\n\'\'\'\n',
    "no trailing newline": "while True:\n\tbreak",
}


def _same(module: cst.Module) -> None:
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    got = positions(module)
    assert len(got) == len(expected)
    for node, rng in expected.items():
        assert got[node] == rng, (type(node).__name__, got[node], rng)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_node_of_the_repository_s_files(path: Path):
    _same(parse_module(path.read_text()))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_node_of_awkward_layouts(name: str):
    _same(parse_module(SAMPLES[name]))


def test_the_text_of_names_and_dotted_names_is_the_generated_code():
    from hpulint.analysis.syntax import _EMPTY, _plain_dotted, code

    samples = "a.b.c\n(a).b\na . b\n(a.b)\na.\\\n  b\na.b  # c\nx[0].y\n"
    seen = fast = 0
    for path in [*FILES, None]:
        module = parse_module(path.read_text() if path else samples)
        stack = [module]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            if isinstance(node, (cst.Name, cst.Attribute)):
                seen += 1
                fast += _plain_dotted(node) is not None
                assert code(node) == _EMPTY.code_for_node(node)
    assert fast > seen * 0.9
