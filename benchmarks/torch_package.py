"""The whole installed torch package, linted file by file, against the reviewed list.

    python benchmarks/torch_package.py

Every finding hpulint reports on torch's own source (library code, not training loops) was read
and is listed with its reason in ``tests/data/torch_findings.txt``. This lints all of it (about
2,300 files, 46 MB: several minutes on two cores) and prints the files that made a rule or the
analysis fail, the findings not in the list (NEW: review them; a false alarm is a bug in the
rule, not a line to add) and the listed findings no longer reported (GONE). Exit status 1 when
any of the three is not empty.

The test suite (``tests/test_corpus.py``) checks a fixed quarter of the package and every file
with a reviewed finding; run this before changing a rule, and after.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from torch_corpus import compare, lint_files, torch_files  # noqa: E402


def main() -> int:
    files = torch_files()
    if files is None:
        sys.exit("torch is not installed")
    start = time.perf_counter()
    found, errors = lint_files(files)
    new, gone = compare(found, {rel for rel, _ in files})
    print(f"{len(files)} files, {len(found)} findings, {time.perf_counter() - start:.0f} s")
    for e in errors:
        print("ERROR", e)
    for x in new:
        print("NEW", *x)
    for x in gone:
        print("GONE", *x)
    return 1 if errors or new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
