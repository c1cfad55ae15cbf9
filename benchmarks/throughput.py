"""Throughput at repository scale, every tool on the same files in one run.

    python benchmarks/throughput.py [--repeat N] [--torchfix] [--whole-torch]

Files: the installed torch's nn, optim and utils packages (318 files, 110k lines in 2.13), copied
to a temporary folder. Prints files per second and ratios for: bare libcst parsing (one process),
hpulint cold with one job and with all jobs, hpulint warm (the cache), flake8 with one job and all
jobs (default plugins only; hpulint's own flake8 plugin is timed on its own row), TorchFix
(`--torchfix`, needs `pip install torchfix`; slow), a warm re-run after one file is edited, a
single file from a cold process for hpulint and flake8, and (`--whole-torch`) hpulint cold on the
whole torch package.

What each side of the speed target (cold, one job, within 1.5x of a bare parse) includes:

* bare parse: a new Python process that imports libcst and calls ``libcst.parse_module`` on the
  bytes of each file, one after the other (interpreter start-up and the import included).
* hpulint cold, 1 job: ``python -m hpulint check -q --no-cache -j 1 --exit-zero DIR``, all a user's
  command does: interpreter start-up, imports, discovery, the project index, reading, parsing,
  analysing and summarising every file, the link, finishing every file, positions, the report.

Each row is a child process; its time is given as CPU (user + system, from the child's resource
usage) and wall. The machine may be shared: the bare parse and the cold one-job lint are run
``--repeat`` times, alternately, and the fastest run of each is kept (CPU time is the steadier of
the two under load). hpulint's modules are byte-compiled first, as ``pip install`` does (in a
checkout run with PYTHONDONTWRITEBYTECODE they would otherwise be compiled by every run, while
libcst's were compiled when it was installed).
"""
from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def torch_root() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None:
        sys.exit("torch is not installed: pip install torch==2.13.0")
    return Path(list(spec.submodule_search_locations)[0])


# flake8 with its own plugins only (pyflakes, pycodestyle, mccabe): hpulint's HPU plugin is
# installed here too (and TorchFix's TOR plugin, with --torchfix) and would otherwise run
# inside flake8 and be timed as flake8
PLAIN_FLAKE8 = (
    "import sys\n"
    "import flake8.plugins.finder as finder\n"
    "orig = finder.find_plugins\n"
    "finder.find_plugins = lambda cfg, opts: [p for p in orig(cfg, opts) if p.package not in ('hpulint', 'TorchFix')]\n"
    "from flake8.main.cli import main\n"
    "sys.exit(main())\n"
)


def run(cmd, cwd=None) -> tuple:
    """(CPU seconds, wall seconds) of a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        print(f"   ! {' '.join(map(str, cmd[:4]))}... exited {proc.returncode}: {proc.stderr[-300:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), took


def timed(cmd, cwd=None) -> float:
    return run(cmd, cwd)[1]


def best_of(n, fn) -> float:
    return min(fn() for _ in range(n))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--torchfix", action="store_true", help="also time TorchFix (about 100 s)")
    ap.add_argument("--whole-torch", action="store_true", help="also lint the whole torch package")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the bare parse and the cold one-job lint")
    args = ap.parse_args()
    import hpulint

    compileall.compile_dir(Path(hpulint.__file__).parent, quiet=1)
    root = torch_root()
    jobs = os.cpu_count() or 1
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        # a private copy, so caches and relative paths are the same for every tool
        work = Path(tmp) / "corpus"
        for sub in ("nn", "optim", "utils"):
            shutil.copytree(root / sub, work / sub, ignore=shutil.ignore_patterns("*.pyc", "__pycache__"))
        files = sorted(work.rglob("*.py"))
        lines = sum(p.read_bytes().count(b"\n") for p in files)
        n = len(files)
        print(f"corpus: torch {root.name} nn+optim+utils, {n} files, {lines} lines; {jobs} CPUs")
        rows = {}

        parse_code = ("import sys, libcst as cst, pathlib\n"
                      "for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')): cst.parse_module(p.read_bytes())\n")
        cold = [py, "-m", "hpulint", "check", "-q", "--no-cache", "-j", "1", "--exit-zero", work]
        bare_runs, cold_runs = [], []
        for _ in range(max(1, args.repeat)):
            bare_runs.append(run([py, "-c", parse_code, work]))
            cold_runs.append(run(cold))
        cpu = {"libcst parse only (1 process)": min(c for c, _ in bare_runs),
               "hpulint cold, 1 job": min(c for c, _ in cold_runs)}
        rows["libcst parse only (1 process)"] = min(w for _, w in bare_runs)
        rows["hpulint cold, 1 job"] = min(w for _, w in cold_runs)
        rows[f"hpulint cold, {jobs} jobs"] = timed([py, "-m", "hpulint", "check", "-q", "--no-cache", "-j", str(jobs),
                                                   "--exit-zero", work])
        cache_run = [py, "-m", "hpulint", "check", "-q", "-j", str(jobs), "--exit-zero", "."]
        subprocess.run([py, "-m", "hpulint", "clean", "."], cwd=work, stdout=subprocess.DEVNULL)
        timed(cache_run, cwd=work)  # fills the cache
        rows["hpulint warm (cache)"] = best_of(3, lambda: timed(cache_run, cwd=work))
        # an edit to one file: only that file is summarised and analysed again (a different edit
        # each time, so none is in the cache; the cache is warm again before the next one)
        edited = work / "nn" / "modules" / "linear.py"
        original = edited.read_text()
        edit_runs = []
        for k in range(max(1, args.repeat)):
            edited.write_text(original + f"\n\ndef _hpulint_benchmark_edit{k}(x):\n    return x + {k}\n")
            edit_runs.append(run(cache_run, cwd=work))
            edited.write_text(original)
            timed(cache_run, cwd=work)
        rows["hpulint warm, one file edited"] = min(w for _, w in edit_runs)
        cpu["hpulint warm, one file edited"] = min(c for c, _ in edit_runs)
        if shutil.which("flake8") or importlib.util.find_spec("flake8"):
            flake8 = [py, "-c", PLAIN_FLAKE8, "--isolated", "--exit-zero"]
            rows["flake8, 1 job"] = timed([*flake8, "-j", "1", work])
            rows[f"flake8, {jobs} jobs"] = timed([*flake8, "-j", str(jobs), work])
            rows[f"flake8 --select HPU (hpulint's plugin), {jobs} jobs"] = timed(
                [py, "-m", "flake8", "--isolated", "--exit-zero", "--select", "HPU", "-j", str(jobs), work])
        if args.torchfix:
            if importlib.util.find_spec("torchfix") is None:
                print("   ! torchfix is not installed (pip install torchfix)")
            else:
                rows["TorchFix"] = timed([py, "-m", "torchfix", str(work)])

        width = max(map(len, rows))
        print(f"  {'':<{width}}  {'wall':>7}    {'files/s':>8}  (CPU: user + system)")
        for name, secs in rows.items():
            extra = f"  CPU {cpu[name]:6.2f} s" if name in cpu else ""
            print(f"  {name:<{width}}  {secs:7.2f} s  {n / secs:8.1f}{extra}")
        print(f"  (bare parse, cold 1 job, one file edited: fastest of {max(1, args.repeat)} runs; CPU "
              f"{', '.join(f'{c:.2f}' for c, _ in bare_runs)} and {', '.join(f'{c:.2f}' for c, _ in cold_runs)} s)")
        base = rows["libcst parse only (1 process)"]
        cold1 = rows["hpulint cold, 1 job"]
        print("ratios (targets in brackets):")
        print(f"  hpulint cold 1 job / bare parse      {cold1 / base:6.2f}x wall, "
              f"{cpu['hpulint cold, 1 job'] / cpu['libcst parse only (1 process)']:.2f}x CPU  [<= 1.5]")
        if "flake8, 1 job" in rows:
            print(f"  hpulint cold 1 job / flake8 1 job    {cold1 / rows['flake8, 1 job']:6.2f}x  [<= 1.0]")
            print(f"  hpulint cold all / flake8 all        "
                  f"{rows[f'hpulint cold, {jobs} jobs'] / rows[f'flake8, {jobs} jobs']:6.2f}x  [<= 1.0]")
        print(f"  cold 1 job / warm                    {cold1 / rows['hpulint warm (cache)']:6.1f}x  [>= 20]")
        print(f"  one file edited / cold 1 job         {rows['hpulint warm, one file edited'] / cold1:6.2f}x wall, "
              f"{cpu['hpulint warm, one file edited'] / cpu['hpulint cold, 1 job']:.2f}x CPU  [<= 0.1]")
        print(f"  cold all jobs / warm                 "
              f"{rows[f'hpulint cold, {jobs} jobs'] / rows['hpulint warm (cache)']:6.1f}x")
        if "TorchFix" in rows:
            print(f"  TorchFix / hpulint cold 1 job        {rows['TorchFix'] / cold1:6.1f}x  [>= 5]")

        one = work / "nn" / "modules" / "linear.py"
        h = best_of(5, lambda: timed([py, "-m", "hpulint", "check", "--no-cache", "--exit-zero", one]))
        print(f"one file from a cold process: hpulint {h:.3f} s", end="")
        if "flake8, 1 job" in rows:
            f = best_of(5, lambda: timed([py, "-c", PLAIN_FLAKE8, "--isolated", "--exit-zero", one]))
            print(f", flake8 {f:.3f} s  (ratio {h / f:.2f}x, target <= 1.0)")
        else:
            print()

    if args.whole_torch:
        every = sum(1 for _ in root.rglob("*.py"))
        t = timed([py, "-m", "hpulint", "check", "-q", "--no-cache", "-j", str(jobs), "--exit-zero", root])
        print(f"whole torch package, cold, {jobs} jobs: {every} files in {t:.1f} s ({every / t:.0f} files/s)")


if __name__ == "__main__":
    main()
