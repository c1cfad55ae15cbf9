"""Recall and look-alike cleanliness of hpulint on labelled real code.

    python benchmarks/real_code.py tests/data/real_code_labels.tsv --checkouts /path/to/checkouts
    python benchmarks/real_code.py LABELS.tsv --repos repos.tsv --show-misses

The labels (``repo commit path line code polarity target why``, one per line) were written by
reading public code, before the rules were changed for them: ``hazard`` lines are real
recompiles or host syncs on a lazy device, ``safe`` lines only look like one. This script
fetches nothing: point it at checkouts of the labelled commits, either with ``--repos`` (a TSV of
``repo commit checkout``) or ``--checkouts DIR`` holding ``OWNER__NAME`` folders. Each
repository's labelled files are linted as part of their project (the checkout, a project even
when extracted without the ``.git`` folder its clone has), as ``hpulint check .`` in the clone
would lint them, and a label counts as found when a finding with its code covers
its line.

It prints, per rule and per rule family, the recall on hazards and the share of look-alikes left
clean. Rules that report only for a known lazy target (HPU004, HPU007, HPU011, HPU018) are measured on
the labels whose code targets hpu or xla; their device-neutral (``any``) labels are counted apart.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hpulint.cli import discover  # noqa: E402
from hpulint.config import Config  # noqa: E402
from hpulint.index import index_for, is_project  # noqa: E402
from hpulint.runner import run  # noqa: E402

FAMILIES = {
    "constants": ("HPU001", "HPU011"),
    "host-syncs": ("HPU002", "HPU005", "HPU008"),
    "shapes": ("HPU003", "HPU006", "HPU007", "HPU018"),
    "markers": ("HPU004",),
    "graph-apis": ("HPU009", "HPU010"),
    "compile": ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017"),
}
TARGETED = ("HPU004", "HPU007", "HPU011", "HPU018")


def read_labels(path: Path) -> list:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    for r in rows:
        r["line"] = int(r["line"])
    return rows


def checkouts(args) -> dict:
    out = {}
    if args.repos:
        with open(args.repos, newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh, delimiter="\t"):
                out[r["repo"]] = (Path(r["checkout"]), r["commit"])
    if args.checkouts:
        for d in Path(args.checkouts).iterdir():
            if d.is_dir() and "__" in d.name:
                out.setdefault(d.name.replace("__", "/", 1), (d, None))
    return out


def lint_repo(root: Path, files: list, jobs: int) -> tuple:
    cfg = Config()
    # as a user runs it: test code is not checked (lint-tests = false), so labels there count
    # as missed hazards and clean look-alikes
    paths = [str(root / f) for f in files if (root / f).is_file() and not cfg.is_test(root / f)]
    start = time.perf_counter()
    # the checkout is a clone's work tree (extracted without its `.git`, a project marker); a
    # project inside it (a monorepo's `backends/gaudi/server/pyproject.toml`) is the root a user
    # linting those files gets
    project = sub_project(root, paths)
    infos = index_for(paths, project, discover, cfg, project=True)
    results, _ = run(infos, paths, cfg, jobs=jobs)
    found = defaultdict(list)
    errors = []
    for res in results:
        rel = Path(res.path).relative_to(root).as_posix()
        for f in res.findings:
            found[(rel, f.code)].append((f.line, f.end_line))
        errors += [str(e) for e in res.errors]
    return found, errors, time.perf_counter() - start, len(infos)


def sub_project(checkout: Path, paths: list) -> Path:
    """The innermost folder with a project marker holding every linted file, inside the checkout
    (the checkout itself if none)."""
    if not paths:
        return checkout
    here = Path(os.path.commonpath([str(Path(p).parent) for p in paths]))
    while here != checkout and checkout in here.parents:
        if is_project(here):
            return here
        here = here.parent
    return checkout


def covered(spans: list, line: int) -> bool:
    return any(a == line or a <= line <= b for a, b in spans)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("labels", type=Path, nargs="+")
    ap.add_argument("--repos", type=Path, help="TSV of repo, commit, checkout")
    ap.add_argument("--checkouts", type=Path, help="a folder of OWNER__NAME checkouts")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--show-misses", action="store_true", help="list missed hazards and flagged look-alikes")
    ap.add_argument("--json", type=Path, help="also write the per-label outcome here")
    args = ap.parse_args(argv)
    labels = [r for path in args.labels for r in read_labels(path)]
    where = checkouts(args)
    by_repo = defaultdict(list)
    for r in labels:
        by_repo[r["repo"]].append(r)
    outcome = []
    missing_repos = []
    for repo, rows in sorted(by_repo.items()):
        if repo not in where:
            missing_repos.append(repo)
            continue
        root, commit = where[repo]
        if commit is not None and any(r["commit"] != commit for r in rows):
            print(f"warning: {repo}: some labels are for another commit than the checkout {commit[:10]}",
                  file=sys.stderr)
        files = sorted({r["path"] for r in rows})
        absent = [f for f in files if not (root / f).is_file()]
        if absent:  # a partial checkout would count its labels as missed or clean
            print(f"error: {repo}: {len(absent)} labelled files are not in the checkout {root}: "
                  + ", ".join(absent[:5]), file=sys.stderr)
            return 2
        found, errors, secs, indexed = lint_repo(root, files, args.jobs)
        print(f"{repo}: {len(files)} labelled files linted in a project of {indexed} files in {secs:.1f} s"
              + (f", {len(errors)} file errors" if errors else ""))
        for r in rows:
            hit = covered(found.get((r["path"], r["code"]), []), r["line"])
            outcome.append({**r, "reported": hit, "test_code": Config().is_test(root / r["path"])})
    if missing_repos:
        print("no checkout for: " + ", ".join(missing_repos), file=sys.stderr)
    report(outcome, args.show_misses)
    if args.json:
        args.json.write_text(json.dumps(outcome, indent=1))
    return 0


def _score(rows: list) -> tuple:
    haz = [r for r in rows if r["polarity"] == "hazard"]
    safe = [r for r in rows if r["polarity"] == "safe"]
    found = sum(r["reported"] for r in haz)
    clean = sum(not r["reported"] for r in safe)
    return found, len(haz), clean, len(safe)


def _fmt(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.2f}" if b else "-"


def report(outcome: list, show_misses: bool) -> None:
    scored = [r for r in outcome if not (r["code"] in TARGETED and r["target"] == "any")]
    apart = [r for r in outcome if r["code"] in TARGETED and r["target"] == "any"]
    print()
    print(f"{'rule':<12} {'recall (hazards found)':>24} {'look-alikes left clean':>24}")
    codes = sorted({r["code"] for r in scored})
    for code in codes:
        f, h, c, s = _score([r for r in scored if r["code"] == code])
        print(f"{code:<12} {_fmt(f, h):>24} {_fmt(c, s):>24}")
    print()
    for fam, members in FAMILIES.items():
        rows = [r for r in scored if r["code"] in members]
        if rows:
            f, h, c, s = _score(rows)
            print(f"{fam:<12} {_fmt(f, h):>24} {_fmt(c, s):>24}")
    f, h, c, s = _score(scored)
    print(f"{'all':<12} {_fmt(f, h):>24} {_fmt(c, s):>24}")
    tests = [r for r in scored if r.get("test_code")]
    if tests:
        f2, h2, c2, s2 = _score([r for r in scored if not r.get("test_code")])
        print(f"{'not tests':<12} {_fmt(f2, h2):>24} {_fmt(c2, s2):>24}   "
              f"({len(tests)} labels are in test code, which is not checked by default)")
    if apart:
        f, h, c, s = _score(apart)
        print(f"\n{len(apart)} labels of target-only rules on device-neutral code, not scored: "
              f"hazards found {_fmt(f, h)}, look-alikes clean {_fmt(c, s)}")
    if show_misses:
        print("\nmissed hazards:")
        for r in scored:
            if r["polarity"] == "hazard" and not r["reported"]:
                print(f"  {r['code']} {r['repo']}:{r['path']}:{r['line']}  {r['why']}")
        print("\nflagged look-alikes:")
        for r in scored:
            if r["polarity"] == "safe" and r["reported"]:
                print(f"  {r['code']} {r['repo']}:{r['path']}:{r['line']}  {r['why']}")


if __name__ == "__main__":
    sys.exit(main())
