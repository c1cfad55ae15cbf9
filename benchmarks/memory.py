"""Peak memory of a cold lint of a folder, as a user runs it.

    python benchmarks/memory.py DIR [--jobs N]

Runs `hpulint --no-cache --jobs N DIR` in a child process and prints the files checked, the wall
time and the largest resident set of any of its processes (the main one or a worker). A worker
keeps the analysed trees of at most `hpulint.runner.KEEP_BYTES` of source between the phases,
so the peak stays bounded on repositories of thousands of files.
"""
from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "hpulint", "--no-cache", "--exit-zero", "--jobs",
                           str(args.jobs), args.folder], capture_output=True, text=True)
    took = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # kB on Linux
    m = re.search(r"\((\d+) files? checked\)", proc.stdout)
    files = m.group(1) if m else "?"
    print(f"{args.folder}: {files} files, {took:.1f} s, peak resident set of one process "
          f"{peak_mb:.0f} MB (jobs={args.jobs})")
    if proc.returncode not in (0, 1):
        print(proc.stderr[-2000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
