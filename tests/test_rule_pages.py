"""The rule pages in rules/ (shipped as ``hpulint.pages``) stay honest.

For every rule in ``hpulint.rules.ALL_RULES``: the page exists, has its sections in the agreed
order, its title names the rule's code and name, its Bad example is flagged by that rule, its
Good example is not, its Fix section matches the rule's fix (and the fix repairs the Bad
example), it cites a seed document, and ``hpulint rule CODE`` prints it verbatim.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import hpulint
from hpulint.cli import main
from hpulint.rules import ALL_RULES

PAGES = Path(__file__).resolve().parent.parent / "rules"

# Rules whose cost is a host sync rather than a recompilation.
HOST_SYNC = {"HPU002", "HPU005"}


def expected_sections(code: str) -> list:
    why = "Why it costs a host sync" if code in HOST_SYNC else "Why it costs a recompile"
    return [why, "When it reports", "Bad", "Good", "Fix", "What the verifier measures", "Suppress"]


def page_text(rule) -> str:
    path = PAGES / f"{rule.code}.md"
    assert path.is_file(), f"missing rule page {path}"
    return path.read_text(encoding="utf-8")


def sections(text: str) -> dict:
    """{heading: body} for the '## ' sections, in order (code fences are skipped)."""
    out: dict = {}
    current = None
    in_fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        if not in_fence and line.startswith("## "):
            current = line[3:].strip()
            assert current not in out, f"section {current!r} appears twice"
            out[current] = []
            continue
        if current is not None:
            out[current].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def python_blocks(body: str) -> list:
    return re.findall(r"^```python\n(.*?)^```$", body, flags=re.S | re.M)


def example(rule, section: str) -> str:
    blocks = python_blocks(sections(page_text(rule))[section])
    assert len(blocks) == 1, f"{rule.code}: '## {section}' must hold exactly one ```python block"
    return blocks[0]


def lint(rule, source: str) -> list:
    # Rules that are on by default only for one target are checked on that target; rules that
    # are off by default are selected by their code, as their pages say.
    config = hpulint.Config(target=rule.default_target) if rule.default_target else hpulint.Config()
    if rule.code in hpulint.config.OFF_BY_DEFAULT:
        config.extend_select = [rule.code]
    return hpulint.lint_source(source, path="example.py", config=config)


RULES = pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)


@RULES
def test_title_line(rule):
    lines = page_text(rule).splitlines()
    assert lines[0] == f"# {rule.code} {rule.name}"
    # then one paragraph: what the rule finds
    assert lines[1] == "" and lines[2].strip() and not lines[2].startswith("#")


@RULES
def test_sections_in_order(rule):
    text = page_text(rule)
    found, wanted = list(sections(text)), expected_sections(rule.code)
    assert found == wanted, f"{rule.code}: sections {found}, expected {wanted}"
    intro = text.split("\n## ", 1)[0].splitlines()[1:]
    assert "\n".join(intro).strip(), f"{rule.code}: no paragraph under the title"


@RULES
def test_bad_example_is_flagged(rule):
    findings = lint(rule, example(rule, "Bad"))
    codes = [f.code for f in findings]
    assert rule.code in codes, f"{rule.code}: the Bad example is not flagged (got {codes})"


@RULES
def test_good_example_is_clean(rule):
    findings = [f for f in lint(rule, example(rule, "Good")) if f.code == rule.code]
    assert not findings, f"{rule.code}: the Good example is flagged: {findings}"


@RULES
def test_fix_section_matches_the_rule(rule):
    """The page says "No autofix" exactly when the rule has none, and names its safety."""
    body = sections(page_text(rule))["Fix"]
    if rule.fix_safety is None:
        assert "No autofix" in body, f"{rule.code} has no fix: its page must say 'No autofix'"
        return
    assert "No autofix" not in body, f"{rule.code} has a {rule.fix_safety} fix: update its page"
    for safety in rule.fix_safety.split(" or "):
        assert f"**{safety}**" in body.lower(), f"{rule.code}: Fix must say **{safety}**"


@RULES
def test_fix_repairs_the_bad_example(rule):
    """A rule with a fix removes its own findings from the page's Bad example."""
    if rule.fix_safety is None:
        pytest.skip(f"{rule.code} has no fix")
    from hpulint.fix import fix_source

    config = hpulint.Config(target=rule.default_target) if rule.default_target else hpulint.Config()
    outcome = fix_source(example(rule, "Bad"), "example.py", config, unsafe=True)
    assert not outcome.errors and outcome.changed
    left = [f for f in lint(rule, outcome.fixed) if f.code == rule.code]
    assert not left, f"{rule.code}: findings left after fixing the Bad example: {left}"
    fix_text = " ".join(sections(page_text(rule))["Fix"].split())
    if "Applied to the Bad example it gives the Good one" in fix_text:
        assert outcome.fixed == example(rule, "Good"), f"{rule.code}: the fixed Bad is not the Good"


SOURCES = (
    "https://developer.habana.ai/blog/detecting-frequent-graph-re-compilations/",
    "https://docs.habana.ai/en/latest/PyTorch/PyTorch_Model_Porting/HPU_Graphs_Training.html",
    "https://docs.habana.ai/en/latest/PyTorch/Model_Optimization_PyTorch/Optimization_in_PyTorch_Models.html",
    "https://cloud.google.com/blog/topics/developers-practitioners/pytorchxla-performance-debugging-cloud-tpu-vm-part-ii",
    "https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html",
    "https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html",
    "https://docs.pytorch.org/docs/stable/compile/programming_model.graph_breaks_index.html",
)


@RULES
def test_page_cites_a_source_by_public_url_and_no_internal_label(rule):
    import re

    text = page_text(rule)
    assert any(url in text for url in SOURCES)
    assert not re.search(r"\bseed (\d|'s)|\bseeds\b|\bissue \d|shared/", text.replace("manual_seed", ""), re.I)


def test_messages_carry_no_internal_labels():
    """Every string in the rule modules but their docstrings: what a user can see in a message."""
    import ast
    import re

    found = []
    for path in sorted((PAGES.parent / "hpulint" / "rules").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
                      and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        found += [f"{path.name}: {n.value[:60]}" for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
                  and re.search(r"\bseed \d|\bissue \d", n.value, re.I)]
    assert found == []
