"""Draw a random sample of hpulint's findings on a whole checkout, for reading by hand.

    python benchmarks/sample_findings.py /path/to/owner__name -n 40 --seed 9 -o sample.tsv
    python benchmarks/sample_findings.py /path/to/owner__name --check sample.tsv

The first form lints the checkout the way a user would (``hpulint check --format json
--no-cache --jobs 2 .`` run inside the checkout, so its own configuration applies), removes
duplicates (one finding per path, line and code), draws a seeded random sample and writes a TSV
skeleton ``repo commit path line code verdict why`` with ``verdict`` and ``why`` left empty for a
reader to fill (``right`` or ``wrong``). The seed is printed.

With ``--check FILE`` it lints the checkout again and prints, for a filled-in sample, the share
judged right (overall and per rule) and which sampled findings are no longer reported (with the
reader's verdict, so a fix that removed a wrong finding shows as such).

The commit comes from ``git rev-parse HEAD`` when the checkout is a git work tree, else from
``tests/data/real_code_repos.tsv`` or ``tests/data/real_code_holdout_repos.tsv`` (matched on the
checkout path or the repository name). The repository name defaults to the folder name with its
first ``__`` read as ``/``. This script fetches nothing.
"""
from __future__ import annotations

import argparse
import csv
import json
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPO_TABLES = ("tests/data/real_code_repos.tsv", "tests/data/real_code_holdout_repos.tsv")
FIELDS = ("repo", "commit", "path", "line", "code", "verdict", "why")


def hpulint_cmd() -> list:
    exe = shutil.which("hpulint")
    return [exe] if exe else [sys.executable, "-m", "hpulint"]


def lint(checkout: Path, jobs: int) -> list:
    """Findings of a whole-checkout run, as the JSON list hpulint prints."""
    cmd = hpulint_cmd() + ["check", "--format", "json", "--no-cache", "--exit-zero",
                           "--jobs", str(jobs), "."]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=checkout, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{checkout}: hpulint exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    try:
        findings = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError as exc:
        sys.exit(f"{checkout}: hpulint's JSON output is unreadable ({exc})")
    print(f"linted {checkout} in {took:.0f}s: {len(findings)} findings", file=sys.stderr)
    if proc.stderr.strip():
        print(f"hpulint stderr (last lines):\n{proc.stderr.strip()[-1500:]}", file=sys.stderr)
    return findings


def load_findings(checkout: Path, args) -> list:
    if args.lint_json:
        with open(args.lint_json, encoding="utf-8") as fh:
            return json.load(fh)
    findings = lint(checkout, args.jobs)
    if args.save_json:
        with open(args.save_json, "w", encoding="utf-8") as fh:
            json.dump(findings, fh)
    return findings


def keys(findings: list) -> list:
    """One (path, line, code) per reported place, sorted, paths relative to the checkout; a
    notebook's path names the cell its line counts in (`nb.ipynb#cell29`)."""
    out = set()
    for f in findings:
        path = Path(f["path"]).as_posix()
        if path.startswith("./"):
            path = path[2:]
        if f.get("cell") is not None:
            path = f"{path}#cell{f['cell']}"
        out.add((path, int(f["line"]), f["code"]))
    return sorted(out)


def _place(path: str, line, code: str) -> tuple:
    """A place compared without its cell (samples drawn before cells were written lack it)."""
    return path.split("#cell", 1)[0], int(line), code


def repo_name(checkout: Path, given: str | None) -> str:
    if given:
        return given
    name = checkout.resolve().name
    return name.replace("__", "/", 1) if "__" in name else name


def commit_of(checkout: Path, repo: str, given: str | None) -> str:
    if given:
        return given
    proc = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"],
                          capture_output=True, text=True)
    if proc.returncode == 0 and str(checkout.resolve()) == subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "--show-toplevel"],
            capture_output=True, text=True).stdout.strip():
        return proc.stdout.strip()
    for table in REPO_TABLES:
        path = ROOT / table
        if not path.is_file():
            continue
        with open(path, newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                same_dir = Path(row.get("checkout", "")).resolve() == checkout.resolve()
                if same_dir or row.get("repo") == repo:
                    return row["commit"]
    return "unknown"


def draw(args) -> None:
    checkout = Path(args.checkout)
    repo = repo_name(checkout, args.repo)
    commit = commit_of(checkout, repo, args.commit)
    places = keys(load_findings(checkout, args))
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    chosen = random.Random(seed).sample(places, min(args.n, len(places)))
    chosen.sort()
    print(f"{repo} @ {commit}: {len(places)} reported places, sample of {len(chosen)}, "
          f"seed {seed}", file=sys.stderr)
    print("per rule (all places): " + ", ".join(
        f"{c} {n}" for c, n in sorted(Counter(k[2] for k in places).items())), file=sys.stderr)
    out = open(args.out, "w", newline="", encoding="utf-8") if args.out else sys.stdout
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(FIELDS)
    for path, line, code in chosen:
        writer.writerow((repo, commit, path, line, code, "", ""))
    if args.out:
        out.close()


def check(args) -> None:
    with open(args.check, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    if not rows:
        sys.exit(f"{args.check}: no rows")
    for i, r in enumerate(rows, start=2):
        if r.get("verdict") not in ("right", "wrong"):
            sys.exit(f"{args.check}:{i}: verdict must be 'right' or 'wrong', got {r.get('verdict')!r}")
    reported = {_place(*k) for k in keys(load_findings(Path(args.checkout), args))}
    right = sum(r["verdict"] == "right" for r in rows)
    print(f"{rows[0]['repo']}: {right}/{len(rows)} judged right ({100 * right / len(rows):.0f}%)")
    per_rule = {}
    for r in rows:
        per_rule.setdefault(r["code"], Counter())[r["verdict"]] += 1
    for code in sorted(per_rule):
        c = per_rule[code]
        print(f"  {code}: {c['right']} right, {c['wrong']} wrong")
    gone = [r for r in rows if _place(r["path"], r["line"], r["code"]) not in reported]
    still = [r for r in rows if r not in gone]
    still_right = sum(r["verdict"] == "right" for r in still)
    print(f"still reported: {len(still)}/{len(rows)}, of which right: {still_right}"
          + (f" ({100 * still_right / len(still):.0f}%)" if still else ""))
    print(f"no longer reported: {len(gone)} "
          f"({sum(r['verdict'] == 'wrong' for r in gone)} were judged wrong)")
    for r in gone:
        print(f"  {r['path']}:{r['line']} {r['code']} [{r['verdict']}] {r['why']}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", help="the repository's checkout folder")
    ap.add_argument("-n", type=int, default=40, help="sample size (default 40)")
    ap.add_argument("--seed", type=int, help="random seed (default: a fresh one, printed)")
    ap.add_argument("-o", "--out", help="TSV skeleton to write (default: stdout)")
    ap.add_argument("--repo", help="owner/name (default: from the folder name owner__name)")
    ap.add_argument("--commit", help="commit of the checkout (default: git, else the repo tables)")
    ap.add_argument("--jobs", type=int, default=2, help="hpulint worker processes (default 2)")
    ap.add_argument("--check", metavar="FILE", help="re-lint and score a filled-in sample")
    ap.add_argument("--lint-json", metavar="FILE",
                    help="use this saved `hpulint --format json` output instead of linting")
    ap.add_argument("--save-json", metavar="FILE", help="also save the lint output here")
    args = ap.parse_args(argv)
    if not Path(args.checkout).is_dir():
        sys.exit(f"{args.checkout}: not a folder")
    check(args) if args.check else draw(args)


if __name__ == "__main__":
    main()
