"""Calibrate the verifier against real lazy engines: PyTorch/XLA 2.9 on the CPU, and torch._lazy.

Every fixture and every script in tests/data/calibration/scripts/ runs unchanged on the real
engine; its counters go into a table that is committed and that the tests compare with the
simulated device row by row (tests/test_calibration.py, tests/test_heldout.py,
tests/test_calibration_ltc.py)::

    # in a separate venv that has torch==2.9.0 torch_xla==2.9.0 (never needed by CI):
    PJRT_DEVICE=CPU python benchmarks/calibrate_xla.py xla [NAME ...]
    # in hpulint's venv: PyTorch's Lazy Tensor Core (TorchScript backend) through `--engine ltc`
    python benchmarks/calibrate_xla.py ltc [--jobs 2] [NAME ...]
    python benchmarks/calibrate_xla.py --heldout ltc [--jobs 2]
    # in hpulint's venv: the simulated device (profile xla) against both tables
    python benchmarks/calibrate_xla.py compare [NAME ...]
    # in the PyTorch/XLA venv: PT_XLA_DEBUG=1 output and metrics_report() of a few scripts
    PJRT_DEVICE=CPU python benchmarks/calibrate_xla.py logs
    # the held-out set (tests/data/heldout/: scripts written after the simulator, never tuned on)
    PJRT_DEVICE=CPU python benchmarks/calibrate_xla.py --heldout xla
    python benchmarks/calibrate_xla.py --heldout compare
    # the second held-out set (tests/data/heldout/scripts2/, table xla2.csv)
    PJRT_DEVICE=CPU python benchmarks/calibrate_xla.py --heldout --set 2 xla
    python benchmarks/calibrate_xla.py --heldout --set 2 compare
    # the third held-out set (tests/data/heldout/scripts3/, table xla3.csv)
    PJRT_DEVICE=CPU python benchmarks/calibrate_xla.py --heldout --set 3 xla
    python benchmarks/calibrate_xla.py --heldout --set 3 compare

NAMEs restrict a run to the rows whose script path contains one of them (the other rows of the
table are kept). Each script runs in a child process of its own, so no compilation cache or
counter carries over from one row to the next.

Fixtures written for a Gaudi run on PyTorch/XLA through a small harness (``_HpuOnXla``): the
``habana_frameworks`` modules they import are stand-ins backed by torch_xla (``mark_step`` is
``torch_xla.sync()``; the HPU Graph wrappers return the model; ``FusedSDPA`` is the attention in
plain ops) and a TorchFunctionMode maps the ``"hpu"`` device to ``"xla"``.

Columns of the xla table: ``compiles`` (the ``UncachedCompile`` counter, which equals the samples
of ``CompileTime``), ``cached`` (``CachedCompile``), ``transfers`` (samples of
``TransferFromDeviceTime``: host reads), ``mark_steps`` (``MarkStep``), ``graph_max``
(the largest ``TensorsGraphSize`` sample: XLA IR nodes, not aten ops, so it is recorded but not
compared), ``status`` and ``seconds``.

Columns of the ltc tables (tests/data/calibration/ltc.csv, tests/data/heldout/ltc.csv), from
``torch._lazy.metrics``: ``compiles`` (``UncachedCompile``), ``cached`` (``CachedCompile``),
``scalar_reads`` (``aten::_local_scalar_dense``: item, bool, format...), ``mark_steps``
(``MarkStep``), ``fallback_ops`` (the other ``aten::`` counters: ops run on the CPU); ``reads``
(the script's host reads of lazy tensors, counted where the script makes them), and
``compile_sites`` (where each compilation happened: ``FILE:LINE@STEP SITE``, ``+`` when
uploads were pending), ``status`` and ``seconds`` (wall time of the child process).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "calibration"
SCRIPTS = DATA / "scripts"
REALISTIC = ROOT / "tests" / "data" / "realistic"
XLA_TABLE = DATA / "xla.csv"
LTC_TABLE = DATA / "ltc.csv"
LOGS = ROOT / "tests" / "data" / "logs" / "xla"
HELDOUT = ROOT / "tests" / "data" / "heldout"
HELDOUT_TABLE = HELDOUT / "xla.csv"
HELDOUT_LTC_TABLE = HELDOUT / "ltc.csv"
# held-out set -> (its scripts folder, its table, its key in tests/data/heldout/versions.json)
HELDOUT_SETS = {"1": (HELDOUT / "scripts", HELDOUT / "xla.csv", "xla"),
                "2": (HELDOUT / "scripts2", HELDOUT / "xla2.csv", "xla2"),
                "3": (HELDOUT / "scripts3", HELDOUT / "xla3.csv", "xla3")}

XLA_COLUMNS = ("script", "args", "compiles", "cached", "transfers", "mark_steps", "graph_max",
               "status", "seconds")
LTC_COLUMNS = ("script", "args", "compiles", "cached", "reads", "scalar_reads", "mark_steps",
               "fallback_ops", "compile_sites", "status", "seconds")


def rows() -> list:
    """(script relative to the repository, [args]) for every calibrated run, in table order."""
    out = []
    for path in sorted((ROOT / "fixtures").glob("HPU*/*.py")):
        if _replays_on_xla(path):
            out.append((path.relative_to(ROOT).as_posix(), []))
    scripts = sorted(SCRIPTS.glob("*.py")) + sorted(REALISTIC.glob("*.py")) + \
        sorted(REALISTIC.glob("*/train.py"))
    for path in scripts:
        for args in _args_of(path):
            out.append((path.relative_to(ROOT).as_posix(), args))
    return out


def heldout_rows(which: str = "1") -> list:
    """A held-out set: scripts written after the simulator was calibrated, in their own table
    (tests/data/heldout/xla.csv, xla2.csv, xla3.csv) so that the main table's rows stay what they
    were tuned on."""
    out = []
    for path in sorted(HELDOUT_SETS[which][0].glob("*.py")):
        for args in _args_of(path):
            out.append((path.relative_to(ROOT).as_posix(), args))
    return out


def _replays_on_xla(path: Path) -> bool:
    """A fixture is calibrated when its header gives counts for the xla profile."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            return False
        if line.replace(" ", "").startswith("#replayxla:"):
            return True
    return False


def _args_of(path: Path) -> list:
    """The argument lists a script is calibrated with: one row per ``# calibrate-args: --steps 7``
    line in its first 30 lines, or one row with no arguments."""
    found = [line.split(":", 1)[1].split()
             for line in path.read_text(encoding="utf-8").splitlines()[:30]
             if line.startswith("# calibrate-args:")]
    return found or [[]]


def _selected(all_rows, names):
    if not names:
        return all_rows
    return [r for r in all_rows if any(n in r[0] for n in names)]


def read_table(path: Path) -> dict:
    """(script, args string) -> row dict."""
    if not path.is_file():
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        return {(r["script"], r["args"]): r for r in csv.DictReader(f)}


def _write_table(path: Path, columns, table: dict, order) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = [(s, " ".join(a)) for s, a in order]
    keys += sorted(k for k in table if k not in set(keys))
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for k in keys:
            if k in table:
                w.writerow({c: table[k].get(c, "") for c in columns})


# ---------------------------------------------------------------------------------------------
# Real PyTorch/XLA: one child process per script


def _child_xla(script: str, args: list, result_path: str) -> None:
    import runpy

    import torch_xla.debug.metrics as met

    harness = _HpuOnXla()
    sys.argv = [script] + list(args)
    sys.path.insert(0, os.path.dirname(script))
    status, started = "ok", time.perf_counter()
    with harness:
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            if e.code not in (None, 0):
                status = f"exit {e.code}"
        except BaseException as e:  # noqa: BLE001 - recorded in the table
            status = f"error {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"

    def samples(name):
        d = met.metric_data(name)
        return d[0] if d else 0

    size = met.metric_data("TensorsGraphSize")
    result = {
        "compiles": met.counter_value("UncachedCompile") or 0,
        "compile_time_samples": samples("CompileTime"),
        "cached": met.counter_value("CachedCompile") or 0,
        "transfers": samples("TransferFromDeviceTime"),
        "mark_steps": met.counter_value("MarkStep") or 0,
        "graph_max": max((int(v) for _, v in size[2]), default=0) if size else 0,
        "status": status,
        "seconds": round(time.perf_counter() - started, 2),
    }
    with open(result_path, "w", encoding="utf-8") as f:
        json.dump(result, f)


class _HpuOnXla:
    """Gaudi scripts on PyTorch/XLA: ``habana_frameworks`` stand-ins and ``"hpu"`` -> ``"xla"``."""

    def __enter__(self):
        import contextlib
        import types

        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
        import torch_xla.debug.metrics as met
        from torch.overrides import TorchFunctionMode

        def module(name):
            m = types.ModuleType(name)
            m.__path__ = []
            sys.modules[name] = m
            return m

        hf, hft = module("habana_frameworks"), module("habana_frameworks.torch")
        core, hpu = module("habana_frameworks.torch.core"), module("habana_frameworks.torch.hpu")
        hmet = module("habana_frameworks.torch.hpu.metrics")
        hpex, kernels = (module("habana_frameworks.torch.hpex"),
                         module("habana_frameworks.torch.hpex.kernels"))
        hf.torch, hft.core, hft.hpu, hft.hpex, hpu.metrics, hpex.kernels = \
            hft, core, hpu, hpex, hmet, kernels
        core.mark_step = lambda *a, **k: torch_xla.sync()
        core.hpu = hpu
        hpu.is_available = lambda: True
        hpu.device_count = lambda: 1
        hpu.synchronize = lambda *a, **k: xm.wait_device_ops()
        # hpex: the fused optimizers and clipping as the torch ones they fuse
        norm = module("habana_frameworks.torch.hpex.normalization")
        opts = module("habana_frameworks.torch.hpex.optimizers")
        hpex.normalization, hpex.optimizers = norm, opts

        class FusedClipNorm:
            def __init__(self, parameters, max_norm, norm_type=2.0):
                self.max_norm, self.norm_type = max_norm, norm_type

            def clip_norm(self, parameters):
                return torch.nn.utils.clip_grad_norm_(parameters, self.max_norm, self.norm_type)

        norm.FusedClipNorm = FusedClipNorm
        opts.FusedAdamW = torch.optim.AdamW
        opts.FusedSGD = torch.optim.SGD
        # Gaudi's torch.compile backend: PyTorch/XLA's own (dynamo) backend on this engine
        plain_compile = torch.compile

        def compile_(model=None, *a, backend="inductor", **k):
            backend = "openxla" if backend == "hpu_backend" else backend
            if model is None:
                return lambda fn: plain_compile(fn, *a, backend=backend, **k)
            return plain_compile(model, *a, backend=backend, **k)

        torch.compile = compile_
        hpu.wrap_in_hpu_graph = lambda module, *a, **k: module
        hpu.make_graphed_callables = lambda callables, *a, **k: callables

        class ModuleCacher:
            def __init__(self, *a, **k):
                pass

            def __call__(self, model, *a, **k):
                return model

        hpu.ModuleCacher = ModuleCacher
        hpu.sdp_kernel = lambda *a, **k: contextlib.nullcontext()

        class Stat:
            def __init__(self, name):
                self.start = self.count()

            def count(self):
                return met.counter_value("UncachedCompile") or 0

            def stats(self):
                return [("TotalNumber", self.count() - self.start)]

        hmet.metric_global = lambda name: Stat(name)

        class FusedSDPA:
            @staticmethod
            def apply(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, *a, **kw):
                return torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                    scale=scale)

        kernels.FusedSDPA = FusedSDPA

        def mapped(d):
            if isinstance(d, str) and d.split(":")[0] == "hpu":
                return "xla"
            if isinstance(d, torch.device) and d.type == "hpu":
                return torch.device("xla")
            return d

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func, types_, args=(), kwargs=None):
                kwargs = dict(kwargs or {})
                if "device" in kwargs:
                    kwargs["device"] = mapped(kwargs["device"])
                if func is torch.Tensor.to and len(args) > 1:
                    args = (args[0], mapped(args[1])) + tuple(args[2:])
                return func(*args, **kwargs)

        # xmp.spawn / torch_xla.launch: the function in this process for device 0, as hpulint's
        # stand-in runs it, so that this process's counters see its graphs (PJRT_DEVICE=CPU has
        # one device here; a spawned child's metrics would be lost with it)
        import torch_xla.distributed.xla_multiprocessing as xmp

        def spawn(fn, args=(), nprocs=None, start_method="spawn"):
            return fn(0, *args)

        xmp.spawn = spawn
        torch_xla.launch = lambda fn, args=(), *a, **k: fn(*args)
        self.mode = Mode()
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        self.mode.__exit__(None, None, None)
        return False


def run_xla(names, heldout=False, which="1") -> int:
    try:
        import torch
        import torch_xla
    except ImportError as e:
        print(f"calibrate_xla: needs torch_xla ({e}); see the module docstring", file=sys.stderr)
        return 2
    table_path, all_rows = (HELDOUT_SETS[which][1], heldout_rows(which)) if heldout \
        else (XLA_TABLE, rows())
    table = read_table(table_path)
    todo = _selected(all_rows, names)
    env = dict(os.environ, PJRT_DEVICE="CPU")
    for script, args in todo:
        with tempfile.TemporaryDirectory(prefix="calibrate-") as tmp:
            out = os.path.join(tmp, "result.json")
            cmd = [sys.executable, str(Path(__file__).resolve()), "_child", str(ROOT / script),
                   out, *args]
            proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True,
                                  timeout=1800)
            if os.path.exists(out):
                with open(out, encoding="utf-8") as f:
                    res = json.load(f)
            else:
                res = {"status": f"crashed {proc.returncode}: {proc.stderr.strip()[-200:]}"}
        res.update(script=script, args=" ".join(args))
        table[(script, res["args"])] = res
        print(f"{script} {res['args']}: " + " ".join(
            f"{c}={res.get(c, '')}" for c in XLA_COLUMNS[2:]), flush=True)
    table_meta = table_path.parent / "versions.json"
    meta = json.loads(table_meta.read_text()) if table_meta.is_file() else {}
    meta[HELDOUT_SETS[which][2] if heldout else "xla"] = {
        "torch": torch.__version__, "torch_xla": torch_xla.__version__,
        "PJRT_DEVICE": "CPU", "python": sys.version.split()[0]}
    table_meta.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    _write_table(table_path, XLA_COLUMNS, table, all_rows)
    return 0


# ---------------------------------------------------------------------------------------------
# torch._lazy and the simulated device, through hpulint's own replay


def run_ltc(names, heldout=False, jobs=1) -> int:
    """Every row on PyTorch's Lazy Tensor Core through ``hpulint verify --engine ltc``: the
    script's "hpu"/"xla" devices become "lazy", hpulint's stand-ins for ``habana_frameworks`` and
    ``torch_xla`` call ``torch._lazy.mark_step()``; the counts are the engine's own counters."""
    from concurrent.futures import ThreadPoolExecutor

    sys.path.insert(0, str(ROOT))
    import torch

    from hpulint.lazy.replay import run

    table_path, all_rows = (HELDOUT_LTC_TABLE, heldout_rows()) if heldout else (LTC_TABLE, rows())
    table = read_table(table_path)

    def one(row):
        script, args = row
        # a fresh process per row (run() starts a child): no compilation cache carries over
        r = run(str(ROOT / script), args, profile="xla", engine="ltc", timeout=900)
        counters = r.get("engine_counters") or {}
        status = r["status"]
        if status != "ok":
            err = r.get("error") or {}
            first = (err.get("message") or "").splitlines()[:1]
            status = f"{status} {err.get('type', '')}: {first[0][:120] if first else ''}"
        return {"script": script, "args": " ".join(args),
                "compiles": counters.get("UncachedCompile", r["compiles"]),
                "cached": counters.get("CachedCompile", r["cached"]),
                "reads": r["syncs"],
                "scalar_reads": counters.get("aten::_local_scalar_dense", 0),
                "mark_steps": counters.get("MarkStep", 0),
                "fallback_ops": " ".join(f"{k}={v}" for k, v in
                                         sorted((r.get("fallback_ops") or {}).items())),
                "compile_sites": compile_sites(r.get("events") or []),
                "status": status, "seconds": r.get("wall_time", "")}

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for res in pool.map(one, _selected(all_rows, names)):
            table[(res["script"], res["args"])] = res
            print(f"{res['script']} {res['args']}: " + " ".join(
                f"{c}={res[c]}" for c in LTC_COLUMNS[2:]), flush=True)
    table_meta = table_path.parent / "versions.json"
    meta = json.loads(table_meta.read_text()) if table_meta.is_file() else {}
    meta["ltc"] = {"torch": torch.__version__, "backend": "TorchScript (torch._lazy.ts_backend)",
                   "python": sys.version.split()[0]}
    table_meta.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    _write_table(table_path, LTC_COLUMNS, table, all_rows)
    return 0


def compile_sites(events) -> str:
    """Where the compilations happened, for the site-by-site comparison: ``FILE:LINE@STEP SITE``
    entries joined by ``; ``, one per compilation (``+`` after STEP: uploads were pending), in
    the order they happened."""
    out = []
    for e in events:
        if e.get("kind") == "compile":
            where = f"{os.path.basename(e['file'] or '?')}:{e['line']}"
            out.append(f"{where}@{e['step']}{'+' if e.get('uploads_pending') else ''} {e['site']}")
    return "; ".join(out)


def compare(names, heldout=False, which="1") -> int:
    """The simulated device (profile xla) next to the real engines, row by row."""
    sys.path.insert(0, str(ROOT))
    from hpulint.lazy.replay import replay

    xla = read_table(HELDOUT_SETS[which][1] if heldout else XLA_TABLE)
    ltc = {} if heldout else read_table(LTC_TABLE)
    same = total = 0
    for script, args in _selected(heldout_rows(which) if heldout else rows(), names):
        key = (script, " ".join(args))
        real = xla.get(key)
        sim = replay(str(ROOT / script), args, profile="xla")
        mine = (sim["compiles"], sim["syncs"])
        line = f"{script:60} sim c={mine[0]:<3} s={mine[1]:<3} st={sim['status']}"
        if real is not None and real["status"] == "ok":
            theirs = (int(real["compiles"]), int(real["transfers"]))
            total += 1
            same += mine == theirs
            line += f"  xla c={theirs[0]:<3} s={theirs[1]:<3} {'ok' if mine == theirs else 'DIFF'}"
        if key in ltc:
            line += f"  ltc c={ltc[key]['compiles']}"
        print(line, flush=True)
    if total:
        print(f"agreement with PyTorch/XLA on compiles and transfers: {same}/{total} rows "
              f"({100 * same / total:.1f}%)")
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_child":
        _child_xla(argv[1], argv[3:], argv[2])
        return 0
    p = argparse.ArgumentParser(prog="calibrate_xla.py", description=__doc__.split("\n")[0])
    p.add_argument("what", choices=("xla", "ltc", "compare", "logs"))
    p.add_argument("names", nargs="*", help="only rows whose script path contains one of these")
    p.add_argument("--heldout", action="store_true",
                   help="the held-out scripts and table (tests/data/heldout/) instead")
    p.add_argument("--jobs", type=int, default=1,
                   help="ltc: rows run at once (each in its own process)")
    p.add_argument("--set", dest="which", choices=sorted(HELDOUT_SETS), default="1",
                   help="which held-out set (with --heldout): 1 scripts/ + xla.csv, "
                        "2 scripts2/ + xla2.csv, 3 scripts3/ + xla3.csv")
    a = p.parse_args(argv)
    if a.what == "xla":
        return run_xla(a.names, a.heldout, a.which)
    if a.what == "ltc":
        return run_ltc(a.names, a.heldout, a.jobs)
    if a.what == "logs":
        return make_logs(a.names)
    return compare(a.names, a.heldout, a.which)


def make_logs(names) -> int:
    raise SystemExit("logs: not written yet")


if __name__ == "__main__":
    sys.exit(main())
