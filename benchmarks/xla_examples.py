"""PyTorch/XLA's own examples, unchanged, through `hpulint verify` on both lazy profiles.

Needs a checkout of github.com/pytorch/xla (not part of hpulint; CI has none, so no test uses
this); the scripts run from it as they are, with their default model (DecoderOnlyConfig():
214M parameters, batches of 16 x 512 tokens)::

    python benchmarks/xla_examples.py /path/to/pytorch/xla                 # --no-compute
    python benchmarks/xla_examples.py /path/to/pytorch/xla --compute       # real values
    python benchmarks/xla_examples.py /path/to/pytorch/xla --plain-step    # + one CPU step
    # the same examples with a small model, to the end, on hpulint (values computed) and on
    # real torch_xla (a python that has torch_xla 2.9; PJRT_DEVICE=CPU):
    python benchmarks/xla_examples.py /path/to/pytorch/xla --small-real /venv/bin/python

For every example and profile it prints how the run ended, the counts and the wall time of the
whole `hpulint verify` command (Python start and torch import included). ``--plain-step`` also
times one training step of the same model in plain PyTorch on this CPU, with no hpulint: what a
replay that computes values must pay per step at least.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ("examples/eager/train_decoder_only_eager.py",
            "examples/eager/train_decoder_only_eager_with_compile.py",
            "examples/eager/train_decoder_only_eager_multi_process.py",
            "examples/eager/train_decoder_only_eager_spmd_data_parallel.py",
            "examples/train_decoder_only_base.py")


def verify(script, profile, max_steps, compute, timeout):
    cmd = [sys.executable, "-m", "hpulint.lazy", script, "--profile", profile, "--format", "json",
           "--max-steps", str(max_steps), "--timeout", str(timeout)]
    if not compute:
        cmd.append("--no-compute")
    env = dict(os.environ)
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + old if old else "")
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=os.path.dirname(script))
    wall = time.perf_counter() - started
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        return {"status": f"no report (exit {proc.returncode}): {proc.stderr.strip()[-300:]}"}, wall
    return data, wall


# Runs an example with a small model (hidden 64, intermediate 128) for N steps: the eager
# examples take no arguments, so their base class's defaults are replaced before they run.
_SMALL = r'''
import os, runpy, sys
script, steps = sys.argv[1], int(sys.argv[2])
examples = os.path.dirname(os.path.dirname(script)) if os.sep + "eager" + os.sep in script \
    else os.path.dirname(script)
sys.path.insert(0, examples)
import torch_xla
torch_xla.launch = lambda fn, args=(), *a, **k: fn(0, *args)  # in this process, device 0
if script.endswith("train_decoder_only_base.py"):
    sys.argv = [script, "--num-steps", str(steps), "--hidden-size", "64",
                "--intermediate-size", "128"]
else:
    import decoder_only_model as dm
    import train_decoder_only_base as tb
    tb.TrainDecoderOnlyBase.__init__.__defaults__ = (
        dm.DecoderOnlyModel, steps, dm.DecoderOnlyConfig(hidden_size=64, intermediate_size=128))
    sys.argv = [script]
runpy.run_path(script, run_name="__main__")
import torch_xla.debug.metrics as met
data = met.metric_data("TransferFromDeviceTime")
print("COUNTS", met.counter_value("UncachedCompile") or 0, met.counter_value("CachedCompile") or 0,
      data[0] if data else 0, met.counter_value("MarkStep") or 0)
'''


def small_runs(checkout, real_python, steps, only):
    import tempfile

    with tempfile.TemporaryDirectory(prefix="xla-examples-") as tmp:
        wrapper = os.path.join(tmp, "small_example.py")
        with open(wrapper, "w", encoding="utf-8") as f:
            f.write(_SMALL)
        print(f"small model (hidden 64, intermediate 128), {steps} steps, to the end: "
              "compiles cached transfers markers", flush=True)
        for rel in EXAMPLES:
            if only and not any(o in rel for o in only):
                continue
            script = str(checkout / rel)
            cmd = [sys.executable, "-m", "hpulint.lazy", wrapper, "--profile", "xla", "--format",
                   "json", "--timeout", "1800", "--", script, str(steps)]
            env = dict(os.environ)
            env["PYTHONPATH"] = str(ROOT)
            t = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp)
            sim_wall = time.perf_counter() - t
            try:
                d = json.loads(proc.stdout)
                sim = (f"{d['status']:7} {d['compiles']} {d['cached']} {d['syncs']} "
                       f"{d['mark_steps']} ({sim_wall:.0f} s)")
            except (ValueError, KeyError):
                sim = f"no report: {proc.stderr.strip()[-200:]}"
            real = "not run"
            if real_python:
                t = time.perf_counter()
                proc = subprocess.run([real_python, wrapper, script, str(steps)], cwd=tmp,
                                      capture_output=True, text=True,
                                      env=dict(os.environ, PJRT_DEVICE="CPU"))
                wall = time.perf_counter() - t
                found = [x for x in proc.stdout.splitlines() if x.startswith("COUNTS ")]
                real = (" ".join(found[-1].split()[1:]) + f" ({wall:.0f} s)" if found
                        else f"failed: {proc.stderr.strip()[-200:]}")
            print(f"{rel:58} hpulint xla: {sim}   torch_xla 2.9: {real}", flush=True)


def plain_step(checkout):
    """One training step of the examples' default model in plain PyTorch (no hpulint)."""
    import torch

    sys.path.insert(0, str(Path(checkout) / "examples"))
    from decoder_only_model import DecoderOnlyConfig, DecoderOnlyModel

    t = time.perf_counter()
    config = DecoderOnlyConfig()
    model = DecoderOnlyModel(config)
    build = time.perf_counter() - t
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    data = torch.zeros(16, 512, dtype=torch.int64)
    t0 = time.perf_counter()
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(data).view(-1, config.vocab_size),
                                             data.view(-1))
    t1 = time.perf_counter()
    loss.backward()
    t2 = time.perf_counter()
    opt.step()
    t3 = time.perf_counter()
    print(f"plain PyTorch on this CPU ({torch.get_num_threads()} threads), no hpulint: "
          f"{params / 1e6:.0f}M parameters, model built in {build:.1f} s; one step: forward "
          f"{t1 - t0:.1f} s, backward {t2 - t1:.1f} s, Adam {t3 - t2:.1f} s", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("checkout", help="a checkout of github.com/pytorch/xla")
    p.add_argument("--max-steps", type=int, default=3)
    p.add_argument("--profiles", nargs="+", default=["xla", "hpu"])
    p.add_argument("--compute", action="store_true",
                   help="compute the values (the default model needs minutes per step here)")
    p.add_argument("--timeout", type=float, default=1800.0)
    p.add_argument("--plain-step", action="store_true")
    p.add_argument("--only", nargs="*", default=None, help="examples whose path contains these")
    p.add_argument("--small-real", metavar="PYTHON", nargs="?", const="", default=None,
                   help="run the examples with a small model to the end on hpulint and, given "
                        "a python with torch_xla, on real torch_xla")
    p.add_argument("--small-steps", type=int, default=12)
    a = p.parse_args(argv)
    checkout = Path(a.checkout).resolve()
    if not (checkout / "examples" / "decoder_only_model.py").is_file():
        print(f"{checkout}: not a checkout of pytorch/xla (no examples/decoder_only_model.py)",
              file=sys.stderr)
        return 2
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "(no git)"
    print(f"pytorch/xla examples at {checkout} {commit}; --max-steps {a.max_steps}, "
          f"{'values computed' if a.compute else '--no-compute'}", flush=True)
    if a.small_real is not None:
        small_runs(checkout, a.small_real, a.small_steps, a.only)
        return 0
    for rel in EXAMPLES:
        if a.only and not any(o in rel for o in a.only):
            continue
        script = str(checkout / rel)
        for profile in a.profiles:
            data, wall = verify(script, profile, a.max_steps, a.compute, a.timeout)
            status = data.get("status")
            line = f"{rel:58} {profile:3} {status:8} {wall:7.1f} s"
            if "compiles" in data:
                line += (f"  compiles {data['compiles']} cached {data['cached']} "
                         f"syncs {data['syncs']} markers {data['mark_steps']}")
            err = data.get("error") or {}
            if status not in ("ok", "stopped"):
                line += f"  {err.get('type', '')}: {str(err.get('message', status))[:160]}"
            missing = data.get("not_stood_in") or []
            if missing:
                line += f"  not stood in: {', '.join(missing)}"
            print(line, flush=True)
    if a.plain_step:
        plain_step(checkout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
