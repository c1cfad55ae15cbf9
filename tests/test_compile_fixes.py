"""The compile fixes, statically (no torch): the exact fixed text, and where no fix (or only an
unsafe one) is offered. tests/test_compile_fix_replay.py proves the fixed fixtures on Dynamo."""
from __future__ import annotations

from textwrap import dedent

from hpulint import Config, lint_source
from hpulint.fix import fix_source


def fixed(src: str, unsafe: bool = False) -> str:
    out = fix_source(dedent(src), "t.py", Config(), unsafe=unsafe)
    assert out.errors == []
    return out.fixed


def codes(src: str) -> set:
    return {f.code for f in lint_source(dedent(src), "t.py", Config())}


STEP = """\
import torch


@torch.compile
def step(x):
    loss = (x * 2).sum()
    {line}
    return loss


for i in range(10):
    {call}
"""


def step(line="print(f\"loss {loss.item():.3f}\")", call="out = step(torch.randn(4))") -> str:
    return STEP.format(line=line, call=call)


def test_logged_read_moves_after_the_call_renamed_and_only_with_unsafe_fixes():
    src = step()
    assert fixed(src) == src
    assert fixed(src, unsafe=True) == dedent("""\
        import torch


        @torch.compile
        def step(x):
            loss = (x * 2).sum()
            return loss


        for i in range(10):
            out = step(torch.randn(4))
            print(f"loss {out.item():.3f}")
        """)


def test_logger_call_moves_too():
    src = "import logging\nlog = logging.getLogger(__name__)\n" + step(
        line='log.info("loss %.3f", loss.item())')
    out = fixed(src, unsafe=True)
    assert '    out = step(torch.randn(4))\n    log.info("loss %.3f", out.item())\n' in out
    assert "log.info" not in out.split("for i")[0]


def test_no_move_when_the_output_could_change():
    cases = [
        step(line='print(f"{x.sum().item()}")'),  # reads another local (a parameter)
        step(call="step(torch.randn(4))"),  # the result is not kept at the call site
        step(call="out = step(torch.randn(4)) * 2"),  # the call is part of an expression
        step() + "callbacks = [step]\n",  # the function is used elsewhere
        step(call='i = step(torch.randn(4))').replace("loss {", "{i} {"),  # the target is read by the print
        step(line='if loss > 0: print(loss.item())'),  # not on every call
    ]
    for src in cases:
        assert "HPU012" in codes(src), src  # reported, without a fix
        assert fixed(src, unsafe=True) == src, src


def test_no_move_when_not_followed_by_return_of_the_value():
    src = dedent("""\
        import torch


        @torch.compile
        def step(x):
            loss = (x * 2).sum()
            print(loss.item())
            return loss * 2


        for i in range(10):
            out = step(torch.randn(4))
        """)
    assert "HPU012" in codes(src)
    assert fixed(src, unsafe=True) == src


MARK = """\
import torch
{imp}

@torch.compile{backend}
def normalize(x):
    return x - x.mean(dim=0)


for batch in range(3, 15):
    x = torch.randn(batch, 8)
    {mark}
    normalize(x)
"""


def test_mark_static_becomes_maybe_mark_dynamic():
    src = MARK.format(imp="", backend="", mark="torch._dynamo.mark_static(x, 0)")
    assert fixed(src) == src.replace("mark_static(x, 0)", "maybe_mark_dynamic(x, 0)")


def test_mark_static_imported_by_name():
    src = MARK.format(imp="from torch._dynamo import mark_static\n", backend="", mark="mark_static(x, 0)")
    out = fixed(src)
    assert "    maybe_mark_dynamic(x, 0)\n" in out
    assert "from torch._dynamo import maybe_mark_dynamic\n" in out


def test_mark_static_fix_is_unsafe_on_another_backend_and_absent_without_a_dimension():
    src = MARK.format(imp="", backend='(backend="hpu_backend")', mark="torch._dynamo.mark_static(x, 0)")
    assert fixed(src) == src
    assert "maybe_mark_dynamic(x, 0)" in fixed(src, unsafe=True)
    src = MARK.format(imp="", backend="", mark="torch._dynamo.mark_static(x)")
    assert "HPU015" in codes(src)
    assert fixed(src, unsafe=True) == src
