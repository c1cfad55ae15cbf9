"""Lint speed against the bare libcst parse, on torch's own nn, optim and utils packages.

    python benchmarks/lint_speed.py [--whole-torch]

Prints, for the same files in one process: libcst parse alone, hpulint's full lint (read,
pre-filter, parse, walk, rules, positions for files with findings) and the ratio. The issue's
target: the lint within 1.5x of the bare parse, never above 2x. ``--whole-torch`` also lints the
whole installed torch package and prints the count per rule (the precision corpus).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

import libcst as cst

from hpulint.config import Config
from hpulint.engine import check_file


def torch_root() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torch is not installed: pip install torch==2.13.0")
    return Path(list(spec.submodule_search_locations)[0])


def corpus(root: Path, subdirs=("nn", "optim", "utils")) -> list:
    files = []
    for sub in subdirs:
        for folder, _, names in os.walk(root / sub):
            files += [Path(folder) / n for n in names if n.endswith(".py")]
    return sorted(files)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--whole-torch", action="store_true")
    args = ap.parse_args()
    root = torch_root()
    files = corpus(root)
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    print(f"corpus: torch {root} nn+optim+utils: {len(files)} files, {lines} lines")

    t0 = time.perf_counter()
    for p in files:
        cst.parse_module(p.read_bytes())
    parse = time.perf_counter() - t0
    print(f"libcst parse only      {parse:7.2f} s  {len(files) / parse:7.1f} files/s")

    cfg = Config()
    t0 = time.perf_counter()
    findings = 0
    for p in files:
        findings += len(check_file(p, cfg).findings)
    lint = time.perf_counter() - t0
    print(f"hpulint lint (1 job)   {lint:7.2f} s  {len(files) / lint:7.1f} files/s  ({findings} findings)")
    print(f"ratio lint/parse       {lint / parse:7.2f}x  (target <= 1.5x, never above 2x)")

    if args.whole_torch:
        every = sorted(root.rglob("*.py"))
        counts, errors = Counter(), 0
        t0 = time.perf_counter()
        for p in every:
            r = check_file(p, cfg)
            counts.update(f.code for f in r.findings)
            errors += len(r.errors)
        dt = time.perf_counter() - t0
        print(f"whole torch package: {len(every)} files in {dt:.1f} s, {errors} files not parsed")
        for code in sorted(counts):
            print(f"  {code}: {counts[code]}")
        print(f"  total: {sum(counts.values())}")


if __name__ == "__main__":
    main()
