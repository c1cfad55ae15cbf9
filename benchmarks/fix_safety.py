"""`hpulint --fix --unsafe-fixes` over real checkouts: does every fixed file still work?

    python benchmarks/fix_safety.py [--repos tests/data/real_code_repos.tsv ...] [--keep DIR]

For each checkout listed (columns repo, commit, checkout), copies its Python files to a
temporary folder, runs `hpulint --fix --unsafe-fixes` over the copy as a user would, and checks
every file the fixes changed:

- it still parses;
- pyflakes finds no new undefined name and no new unused or redefined import in it (a fix must
  never leave a name error or a dangling import behind);
- a second run changes nothing (fixes are idempotent).

It prints one line per repository and the totals, and lists every problem with its file and
line. It fetches nothing: the checkouts must exist (see tests/data/real_code_notes.md).
"""
from __future__ import annotations

import argparse
import ast
import csv
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pyflakes import api as flakes_api
from pyflakes import messages as flakes_messages

WATCHED = (flakes_messages.UndefinedName, flakes_messages.UndefinedLocal, flakes_messages.UnusedImport,
           flakes_messages.RedefinedWhileUnused, flakes_messages.ImportShadowedByLoopVar)


class _Collect:
    def __init__(self) -> None:
        self.found: list = []

    def unexpectedError(self, filename, msg):  # noqa: N802 - pyflakes' reporter interface
        self.found.append(("error", 0, str(msg)))

    def syntaxError(self, filename, msg, lineno, offset, text):  # noqa: N802
        self.found.append(("syntax", lineno or 0, str(msg)))

    def flake(self, message):
        if isinstance(message, WATCHED):
            self.found.append((type(message).__name__, message.lineno, message.message % message.message_args))


def flakes(source: str, name: str) -> set:
    rep = _Collect()
    flakes_api.check(source, name, rep)
    # compare by kind and text (lines move when a fix adds an import)
    return {(kind, text) for kind, _, text in rep.found}


def run_fix(root: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "hpulint", "--fix", "--unsafe-fixes", "--no-cache", "-q", "."]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True)


def check_repo(name: str, checkout: Path, keep: Path | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="hpulint-fix-safety-") as tmp:
        dst = Path(tmp) / checkout.name
        shutil.copytree(checkout, dst, symlinks=True, ignore=shutil.ignore_patterns(".git", "*.pyc", "__pycache__"))
        files = sorted(p for p in dst.rglob("*.py") if p.is_file())
        before = {p: p.read_text(encoding="utf-8", errors="replace") for p in files}
        t0 = time.perf_counter()
        first = run_fix(dst)
        took = time.perf_counter() - t0
        crashes = [line for line in first.stderr.splitlines()
                   if "internal error" in line or "Traceback" in line]
        changed = [p for p in files if p.read_text(encoding="utf-8", errors="replace") != before[p]]
        problems = []
        for p in changed:
            rel = p.relative_to(dst).as_posix()
            after = p.read_text(encoding="utf-8", errors="replace")
            try:
                ast.parse(after, rel)
            except SyntaxError as e:
                problems.append(f"{name}/{rel}:{e.lineno}: no longer parses: {e.msg}")
                continue
            new = flakes(after, rel) - flakes(before[p], rel)
            problems += [f"{name}/{rel}: {kind}: {text}" for kind, text in sorted(new)]
        fixed = {p: p.read_text(encoding="utf-8", errors="replace") for p in changed}
        run_fix(dst)
        second = [p.relative_to(dst).as_posix() for p in files
                  if p.read_text(encoding="utf-8", errors="replace") != fixed.get(p, before[p])]
        if keep is not None:
            shutil.copytree(dst, keep / checkout.name, dirs_exist_ok=True)
    return {"repo": name, "files": len(files), "changed": len(changed), "seconds": round(took, 1),
            "crashes": crashes, "problems": problems, "second_run": second}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos", action="append", default=None, metavar="TSV",
                    help="repository lists (default: the development and held-out sets)")
    ap.add_argument("--keep", type=Path, default=None, help="copy the fixed trees here to read them")
    args = ap.parse_args(argv)
    lists = args.repos or ["tests/data/real_code_repos.tsv", "tests/data/real_code_holdout_repos.tsv"]
    rows = []
    for tsv in lists:
        with open(tsv, encoding="utf-8") as f:
            rows += list(csv.DictReader(f, delimiter="\t"))
    total = {"files": 0, "changed": 0, "problems": 0, "crashes": 0}
    for row in rows:
        checkout = Path(row["checkout"])
        if not checkout.is_dir():
            print(f"{row['repo']}: no checkout at {checkout} (skipped)")
            continue
        res = check_repo(row["repo"], checkout, args.keep)
        for k in ("files", "changed"):
            total[k] += res[k]
        total["problems"] += len(res["problems"])
        total["crashes"] += len(res["crashes"])
        print(f"{res['repo']}: {res['files']} files, {res['changed']} changed by fixes, "
              f"{len(res['problems'])} problems, {len(res['crashes'])} crashes, "
              f"{len(res['second_run'])} changed again by a second run ({res['seconds']} s)")
        for line in res["problems"] + res["crashes"] + [f"second run changed {p}" for p in res["second_run"]]:
            print("   ", line)
    print(f"total: {total['files']} files, {total['changed']} fixed, {total['problems']} problems, "
          f"{total['crashes']} crashes")
    return 1 if total["problems"] or total["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
