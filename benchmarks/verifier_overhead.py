"""How much slower is a replay on the simulated device than plain CPU eager?

    python benchmarks/verifier_overhead.py [--repeat 3] [--steps 200]
    python benchmarks/verifier_overhead.py --compile [--repeat 3] [--steps 200]

For every fixture and for a 200-step MLP training loop it prints the best-of-N wall time of
the script run eagerly on the CPU (the Gaudi/XLA calls are no-ops and the device is the CPU),
of the same script replayed on the simulated device (``hpulint.lazy.replay.replay`` in this
process, profile hpu), and the ratio. Process start-up and ``import torch`` are excluded from
both, so the ratio is the cost of recording, hashing and cause analysis. Aim: under 3x.

``--compile`` measures ``verify --profile compile`` instead, on the same MLP compiled with
``torch.compile``: the script under ``torch.compile(backend="eager")`` alone against the same
script replayed on real Dynamo by hpulint (in this process: shims, Dynamo's log artifacts,
counters; and end to end: ``hpulint verify --profile compile --format json`` against
``python script.py``, process start-up included on both sides, run alternately, one intra-op
thread each; best of N, and the ratio of each back-to-back pair). Aim: within 1.5x.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import textwrap
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from hpulint.lazy.replay import replay  # noqa: E402

MLP = textwrap.dedent('''
    import torch
    import torch.nn.functional as F
    import habana_frameworks.torch.core as htcore

    device = torch.device("hpu")
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 10),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = torch.randn(STEPS, 64, 256)
    labels = torch.randint(0, 10, (STEPS, 64))
    for step in range(STEPS):
        x, y = data[step].to(device), labels[step].to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        htcore.mark_step()
        optimizer.step()
        htcore.mark_step()
    print(f"final loss {loss.item():.4f}")
''')


MLP_COMPILED = textwrap.dedent('''
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = torch.compile(torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 10),
    ))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = torch.randn(STEPS, 64, 256)
    labels = torch.randint(0, 10, (STEPS, 64))
    for step in range(STEPS):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data[step]), labels[step])
        loss.backward()
        optimizer.step()
    print(f"final loss {loss.item():.4f}")
''')


class _EagerShims:
    """The Gaudi/XLA modules as no-ops, for running a script eagerly on the CPU."""

    def __enter__(self):
        noop = lambda *a, **k: None  # noqa: E731
        mods = {}
        for name in ("habana_frameworks", "habana_frameworks.torch", "habana_frameworks.torch.core",
                     "torch_xla", "torch_xla.core", "torch_xla.core.xla_model",
                     "torch_xla.distributed", "torch_xla.distributed.parallel_loader"):
            mods[name] = types.ModuleType(name)
            mods[name].__path__ = []
        mods["habana_frameworks.torch.core"].mark_step = noop
        xm = mods["torch_xla.core.xla_model"]
        xm.mark_step = noop
        xm.xla_device = lambda *a, **k: torch.device("cpu")
        xm.optimizer_step = lambda optimizer, *a, **k: optimizer.step()
        mods["torch_xla.distributed.parallel_loader"].MpDeviceLoader = lambda loader, dev, **k: loader
        self._saved = {n: sys.modules.get(n) for n in mods}
        sys.modules.update(mods)
        return self

    def __exit__(self, *exc):
        for n, m in self._saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m


def _eager(path):
    """The script as a CPU user would run it: "hpu" replaced by "cpu", markers are no-ops."""
    source = Path(path).read_text(encoding="utf-8").replace('"hpu"', '"cpu"')
    code = compile(source, str(path), "exec")
    with _EagerShims():
        exec(code, {"__name__": "__main__", "__file__": str(path)})


def _compiled_eager(path):
    """The script as a user runs it, with torch.compile's backend set to "eager"."""
    import torch._dynamo

    torch._dynamo.reset()
    real = torch.compile

    def compile_eager(model=None, **kwargs):
        kwargs["backend"] = "eager"
        return real(model, **kwargs) if model is not None else real(**kwargs)

    code = compile(Path(path).read_text(encoding="utf-8"), str(path), "exec")
    torch.compile = compile_eager
    try:
        exec(code, {"__name__": "__main__", "__file__": str(path)})
    finally:
        torch.compile = real


def _interleaved(a_cmd, b_cmd, repeat):
    """Wall times of ``a_cmd`` and ``b_cmd`` run alternately (so a change of load on a shared
    machine hits both), each child with one intra-op thread (OMP_NUM_THREADS=1, as this process
    runs): two threads per child on two busy cores made single runs vary by 3x."""
    import subprocess

    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    a, b = [], []
    for _ in range(repeat):
        for cmd, out in ((a_cmd, a), (b_cmd, b)):
            t = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, env=env)
            out.append(time.perf_counter() - t)
    return a, b


def compile_overhead(args):
    with tempfile.TemporaryDirectory() as tmp:
        mlp = Path(tmp) / "mlp_compiled.py"
        mlp.write_text(MLP_COMPILED.replace("STEPS", str(args.steps)))
        devnull = open(os.devnull, "w")
        stdout = sys.stdout
        sys.stdout = devnull
        try:
            e = _best(lambda: _compiled_eager(mlp), args.repeat)
            r = _best(lambda: replay(str(mlp), profile="compile"), args.repeat)
            check = replay(str(mlp), profile="compile")
        finally:
            sys.stdout = stdout
        print(f"MLP training, {args.steps} steps, torch.compile (torch {torch.__version__})")
        print(f"  graphs {check['compiles']}, graph breaks {check['graph_breaks']}, "
              f"recompilations {check['recompiles']}, eager fallbacks {check['fallbacks']}")
        print(f"{'in this process':<42} {'eager-backend s':>15} {'verify s':>9} {'ratio':>7}")
        print(f"{'  torch.compile(backend=eager) vs replay':<42} {e:>15.4f} {r:>9.4f} {r / e:>6.2f}x")
        eager_cmd = [sys.executable, "-c",
                     "import sys, runpy, torch; real = torch.compile; "
                     "torch.compile = lambda m=None, **k: real(m, **{**k, 'backend': 'eager'}); "
                     "runpy.run_path(sys.argv[1], run_name='__main__')", str(mlp)]
        verify_cmd = [sys.executable, "-m", "hpulint", "verify", "--profile", "compile",
                      "--format", "json", str(mlp)]
        pe, pv = _interleaved(eager_cmd, verify_cmd, args.repeat)
        print(f"{'  end to end (python vs hpulint verify)':<42} {min(pe):>15.4f} {min(pv):>9.4f} "
              f"{min(pv) / min(pe):>6.2f}x")
        ratios = sorted(v / e for e, v in zip(pe, pv))
        print(f"    each pair (verify / python, run back to back): "
              f"{' '.join(f'{r:.2f}x' for r in ratios)}; median {ratios[len(ratios) // 2]:.2f}x")


def _best(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--compile", action="store_true",
                    help="measure verify --profile compile on the torch.compile MLP instead")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if args.compile:
        compile_overhead(args)
        return
    # the lazy-mode fixtures (the compile fixtures run on real Dynamo: --compile)
    scripts = [p for p in sorted((ROOT / "fixtures").rglob("*.py"))
               if "# replay hpu:" in p.read_text(encoding="utf-8")]
    with tempfile.TemporaryDirectory() as tmp:
        mlp = Path(tmp) / "mlp_training.py"
        mlp.write_text(MLP.replace("STEPS", str(args.steps)))
        scripts.append(mlp)
        print(f"{'script':<42} {'eager s':>9} {'replay s':>9} {'ratio':>7}")
        total_e = total_r = 0.0
        devnull = open(os.devnull, "w")
        for path in scripts:
            stdout = sys.stdout
            sys.stdout = devnull
            try:
                e = _best(lambda: _eager(path), args.repeat)
                r = _best(lambda: replay(str(path), profile="hpu"), args.repeat)
            except (AttributeError, ImportError) as exc:  # an API the eager no-ops lack
                sys.stdout = stdout
                print(f"{path.relative_to(ROOT)}: skipped, no eager stand-in ({exc})")
                continue
            finally:
                sys.stdout = stdout
            total_e += e
            total_r += r
            name = path.name if path == mlp else str(path.relative_to(ROOT / "fixtures"))
            if path == mlp:
                name = f"MLP training, {args.steps} steps"
            print(f"{name:<42} {e:>9.4f} {r:>9.4f} {r / e:>6.2f}x")
        print(f"{'all':<42} {total_e:>9.4f} {total_r:>9.4f} {total_r / total_e:>6.2f}x")


if __name__ == "__main__":
    main()
