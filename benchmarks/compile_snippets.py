"""Static recall and look-alike cleanliness of the compile rules on the held-out snippets.

    python benchmarks/compile_snippets.py [--show]

tests/data/compile_snippets holds small torch.compile scripts and truth.json, what real
Dynamo (torch 2.13, eager backend) did with each one, measured without hpulint. Twenty-four sets
(``SETS`` below), each written before the rules were run on it: the first (c01-c46) with the rules
HPU012-HPU017, each later one after the rules were changed for the misses of the sets before it,
from the fifth on by someone who had not read the rules (tests/data/compile_snippets/README.md
tells each set's story and first measurement).
Each snippet is linted on
its own, as `hpulint SNIPPET` would,
and:

- a **graph break** (each line of ``break_lines``) is found when a compile-rule finding
  (HPU012-HPU017) is on that line;
- a **recompiling function** (a snippet that is not a look-alike and whose recompiles or eager
  fallbacks are not all explained by its breaks: recompiles or fallbacks with no break line) is
  found when a compile-rule finding is on one of its guard lines (``recompile_lines``), on its
  ``def`` line or inside that function (``recompile_def_lines`` / ``fallback_def_lines``: none when
  the function is torch's, as for a ``functools.partial``), or is a recompile rule's
  finding (HPU015-HPU017: reported at the compile call, the call site or the attribute read)
  anywhere in the snippet;
- a **look-alike** (``safe``) must have no finding of any rule.

It prints the recall on breaks, on recompiling functions and on both together (the share of
lines where Dynamo breaks or recompiles that get a static finding), the precision of the
compile-rule findings, and the look-alikes flagged.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hpulint.config import Config  # noqa: E402
from hpulint.engine import check_file  # noqa: E402

SNIPPETS = ROOT / "tests" / "data" / "compile_snippets"
COMPILE_RULES = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")
RECOMPILE_RULES = ("HPU015", "HPU016", "HPU017")
# (name, its last snippet number)
SETS = (("first", 46), ("second", 62), ("third", 75), ("fourth", 95), ("fifth", 115), ("sixth", 135),
        ("seventh", 155), ("eighth", 175), ("ninth", 195), ("tenth", 215), ("eleventh", 235), ("twelfth", 255),
        ("thirteenth", 275),
        ("fourteenth", 295), ("fifteenth", 315), ("sixteenth", 335), ("seventeenth", 355),
        ("eighteenth", 375), ("nineteenth", 395), ("twentieth", 415), ("twenty-first", 435),
        ("twenty-second", 455), ("twenty-third", 475), ("twenty-fourth", 495), ("twenty-fifth", 515), ("twenty-sixth", 535), ("twenty-seventh", 555), ("twenty-eighth", 999))


def snippet_number(name: str) -> int:
    """c07_x.py -> 7, c115_y.py -> 115."""
    return int(name[1:].split("_", 1)[0])


def snippet_set(name: str) -> str:
    return next(s for s, last in SETS if snippet_number(name) <= last)


def function_spans(path: Path) -> dict:
    """def line -> (first line, last line) of each function (decorators included)."""
    tree = ast.parse(path.read_text())
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            for line in {node.lineno, first}:
                out[line] = (first, node.end_lineno)
    return out


def measure(truth: dict) -> dict:
    rows = []
    for row in truth["snippets"]:
        path = SNIPPETS / row["file"]
        result = check_file(path, Config())
        if result.errors:
            raise SystemExit(f"{path}: {result.errors[0]}")
        findings = [(f.code, f.line) for f in result.findings]
        compile_found = [(c, ln) for c, ln in findings if c in COMPILE_RULES]
        lines = {ln for _, ln in compile_found}
        breaks = {ln: ln in lines for ln in row["break_lines"]}
        recompiling = None
        defs = sorted(set(row["recompile_def_lines"]) | set(row["fallback_def_lines"]))
        # the def may be torch's (a functools.partial, an nn.Sequential): truth.json then has none
        if not row["safe"] and (row["recompiles"] or row["fallbacks"]) and not row["break_lines"]:
            spans = function_spans(path)
            inside = any(spans.get(d, (d, d))[0] <= ln <= spans.get(d, (d, d))[1] for d in defs for ln in lines)
            recompiling = bool(lines & set(row["recompile_lines"])) or inside or \
                any(c in RECOMPILE_RULES for c, _ in compile_found)
        targets = set(row["break_lines"]) | set(row["recompile_lines"]) | set(defs)
        spans = function_spans(path)
        useful = [(c, ln) for c, ln in compile_found if ln in targets or c in RECOMPILE_RULES
                  or any(spans.get(d, (0, -1))[0] <= ln <= spans.get(d, (0, -1))[1] for d in defs)]
        rows.append({"file": row["file"], "safe": row["safe"], "findings": findings, "breaks": breaks,
                     "recompiling": recompiling, "useful": len(useful), "compile_findings": len(compile_found)})
    return {"rows": rows}


def summary(rows: list) -> dict:
    breaks = [hit for r in rows for hit in r["breaks"].values()]
    recs = [r["recompiling"] for r in rows if r["recompiling"] is not None]
    found = sum(breaks) + sum(recs)
    total = len(breaks) + len(recs)
    flagged = [r["file"] for r in rows if r["safe"] and r["findings"]]
    compile_findings = sum(r["compile_findings"] for r in rows)
    useful = sum(r["useful"] for r in rows if not r["safe"])
    return {
        "break_lines": len(breaks), "break_lines_found": sum(breaks),
        "recompiling_functions": len(recs), "recompiling_functions_found": sum(recs),
        "recall": found / total if total else 1.0,
        "compile_findings": compile_findings,
        "precision": useful / compile_findings if compile_findings else 1.0,
        "safe_snippets": sum(r["safe"] for r in rows), "safe_flagged": flagged,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", action="store_true", help="list each snippet's misses and false alarms")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args(argv)
    truth = json.loads((SNIPPETS / "truth.json").read_text())
    rows = measure(truth)["rows"]
    sets = {"all": rows}
    for r in rows:
        sets.setdefault(snippet_set(r["file"]), []).append(r)
    if args.json:
        print(json.dumps({name: summary(part) for name, part in sets.items()}, indent=1))
        return 0
    print(f"held-out compile snippets, torch {truth['torch']}")
    for name in [s for s, _ in SETS] + ["all"]:
        part = sets.get(name, [])
        s = summary(part)
        numbers = sorted(snippet_number(r["file"]) for r in part)
        span = f"c{numbers[0]:02d}-c{numbers[-1]:02d}" if numbers else "none"
        print(f"{name} set ({span}): {len(part)} snippets ({s['safe_snippets']} look-alikes)")
        print(f"  graph-break lines found:      {s['break_lines_found']}/{s['break_lines']}")
        print(f"  recompiling functions found:  {s['recompiling_functions_found']}/{s['recompiling_functions']}")
        print(f"  recall (breaks + recompiles): {s['recall']:.1%}")
        print(f"  compile-rule findings where Dynamo breaks or recompiles: {s['precision']:.1%} "
              f"of {s['compile_findings']}")
        print(f"  look-alikes flagged: {len(s['safe_flagged'])}/{s['safe_snippets']} {' '.join(s['safe_flagged'])}")
    if args.show:
        for r in rows:
            missed = [ln for ln, hit in r["breaks"].items() if not hit]
            if missed or r["recompiling"] is False or (r["safe"] and r["findings"]):
                print(f"  {r['file']}: missed breaks {missed} recompiling found {r['recompiling']} "
                      f"findings {r['findings']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
