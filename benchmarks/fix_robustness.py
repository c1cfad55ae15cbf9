"""--fix --unsafe-fixes over a copy of the installed torch package: robustness, not speed.

    python benchmarks/fix_robustness.py

Copies torch/ into a temporary folder, runs `hpulint --fix --unsafe-fixes` over it twice, and
prints: files, internal errors (crashes), files changed, changed files that no longer parse, and
how many files the second run changed (must be 0: fixes are idempotent).
"""
from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    spec = importlib.util.find_spec("torch")
    if spec is None:
        sys.exit("torch is not installed")
    src = Path(list(spec.submodule_search_locations)[0])
    with tempfile.TemporaryDirectory() as tmp:
        dst = Path(tmp) / "torch"
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.so*", "*.a", "*.pyc", "lib", "include", "bin"))
        files = sorted(dst.rglob("*.py"))
        before = {p: p.read_bytes() for p in files}
        cmd = [sys.executable, "-m", "hpulint", "--fix", "--unsafe-fixes", "--no-cache", "-q", str(dst)]
        t0 = time.perf_counter()
        first = subprocess.run(cmd, capture_output=True, text=True)
        took = time.perf_counter() - t0
        crashes = [l for l in first.stderr.splitlines() if "internal error" in l or "failed:" in l or "Traceback" in l]
        changed = [p for p in files if p.read_bytes() != before[p]]
        broken = []
        for p in changed:
            try:
                ast.parse(p.read_bytes(), str(p))
            except SyntaxError:
                broken.append(p)
        after_first = {p: p.read_bytes() for p in files}
        second = subprocess.run(cmd, capture_output=True, text=True)
        changed_again = [p for p in files if p.read_bytes() != after_first[p]]
        print(f"files linted and fixed:        {len(files)} ({took:.1f} s)")
        print(f"crashes (internal errors):     {len(crashes)}")
        print(f"files changed by the fixes:    {len(changed)}")
        print(f"changed files that don't parse: {len(broken)}")
        print(f"files changed by a second run: {len(changed_again)}")
        for line in crashes[:10]:
            print("  ", line)
        for p in changed:
            print("   changed:", p.relative_to(dst))
        ok = not crashes and not broken and not changed_again and second.returncode in (0, 1, 2)
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
