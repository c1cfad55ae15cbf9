"""Measure every snippet here on real Dynamo, without hpulint: writes truth.json.

    python tests/data/compile_snippets/measure.py [--check] [SNIPPET ...]

Each snippet runs in a fresh Python process the way a user would debug it:
``TORCH_LOGS=graph_breaks,recompiles``, ``torch.compile``'s backend set to ``"eager"``, minimal
stand-ins for ``habana_frameworks``/``torch_xla`` (step markers do nothing, the XLA device is the
CPU, ``torch_xla.compile`` is ``torch.compile``). The counts come from what Dynamo prints and
from ``torch._dynamo.utils.counters``:

* ``compiles``: ``counters["stats"]["unique_graphs"]``;
* ``graph_breaks``: ``graph_breaks`` log records ("Graph break ... in user code at FILE:LINE");
* ``recompiles``: ``recompiles`` log records ("Recompiling function ...") less the ones that hit
  the recompile limit (Dynamo logs the guard failure before it checks the limit);
* ``fallbacks``: "torch._dynamo hit config.recompile_limit" warnings.

Lines: ``break_lines`` (where Dynamo says the graph broke), ``recompile_lines`` (the lines the
failed guards came from), ``recompile_def_lines``/``fallback_def_lines`` (the ``def`` of the
function that recompiled or fell back, when it is the snippet's: a ``functools.partial`` or an
``nn.Sequential`` recompiles in torch's own code). All lines are the snippet's. ``safe``: no graph
break, no eager fallback and at most one recompilation (Dynamo's automatic dynamic shapes recompile once by design). ``--check``
compares a new measurement with truth.json instead of writing it. Given snippet names, only those
are measured (or checked); their rows replace or join the others in truth.json.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

PRELUDE = r'''
import sys, types, runpy
import torch
real = torch.compile
def compile(model=None, **kw):
    kw.pop("mode", None); kw.pop("options", None); kw["backend"] = "eager"
    return real(model, **kw) if model is not None else real(**kw)
torch.compile = compile
def mod(name, **attrs):
    m = types.ModuleType(name); m.__path__ = []; m.__dict__.update(attrs); sys.modules[name] = m
    return m
noop = lambda *a, **k: None
mod("habana_frameworks"); mod("habana_frameworks.torch")
mod("habana_frameworks.torch.core", mark_step=noop)
xm = mod("torch_xla.core.xla_model", mark_step=noop, xla_device=lambda *a, **k: torch.device("cpu"))
mod("torch_xla.core", xla_model=xm)
mod("torch_xla", compile=lambda f=None, full_graph=False, name=None: compile(f, fullgraph=full_graph),
    sync=noop, device=lambda *a: torch.device("cpu"))
runpy.run_path(sys.argv[1], run_name="__main__")
from torch._dynamo.utils import counters
print("HPULINT_UNIQUE_GRAPHS", counters["stats"]["unique_graphs"], file=sys.stderr)
'''

BREAK = re.compile(r"Graph break (?:\(user stack suppressed due to duplicate graph break\) )?"
                   r"in user code at (.+?):(\d+)$")
RECOMPILING = re.compile(r"Recompiling function (\S+) in (.+?):(\d+)$")
GUARD = re.compile(r"- \d+/\d+: .*# (?:.*?)\s+# (.+?):(\d+) in ")
LIMIT = re.compile(r"hit config\.recompile_limit")
LIMIT_FN = re.compile(r"function: '(.+?)' \((.+?):(\d+)\)")


def measure(path: Path) -> dict:
    env = dict(os.environ, TORCH_LOGS="graph_breaks,recompiles", PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, "-c", PRELUDE, str(path)], capture_output=True,
                          text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"{path.name} failed:\n{proc.stderr[-3000:]}")
    # strip the logging prefix ("V1123 08:56:48.818000 24254 torch/...py:5124] [0/0] [__x] ")
    text = [re.sub(r"^[VIWE]\d{4} [\d:.]+ \d+ \S+\] (\[[^\]]*\] )*", "", x)
            for x in proc.stderr.splitlines()]
    name = path.name

    def mine(file):  # lines of torch, the standard library or another module are not recorded
        return os.path.basename(file) == name

    graphs = None
    breaks, break_lines = 0, set()
    recompiles, rec_lines = [], set()
    fallbacks, fall_def = 0, set()
    in_recompile = False
    for line in text:
        if line.startswith("HPULINT_UNIQUE_GRAPHS"):
            graphs = int(line.split()[1])
            continue
        m = BREAK.search(line)
        if m:
            breaks += 1
            if mine(m.group(1)):
                break_lines.add(int(m.group(2)))
            continue
        m = RECOMPILING.search(line)
        if m:
            recompiles.append((m.group(2), int(m.group(3))))
            in_recompile = True
            continue
        if in_recompile:
            g = GUARD.search(line)
            if g:
                if mine(g.group(1)):  # Dynamo shortens this name: its directories may be cut
                    rec_lines.add(int(g.group(2)))
                in_recompile = False  # the first (newest) failure only
                continue
        if LIMIT.search(line):
            fallbacks += 1
            recompiles.pop()  # its guard failure was logged, nothing was compiled
        m = LIMIT_FN.search(line)
        if m and mine(m.group(2)):
            fall_def.add(int(m.group(3)))
    rec_def = {line for file, line in recompiles if mine(file)}
    n_rec = len(recompiles)
    return {
        "file": name, "compiles": graphs, "graph_breaks": breaks, "recompiles": n_rec,
        "fallbacks": fallbacks, "break_lines": sorted(break_lines),
        "recompile_lines": sorted(rec_lines), "recompile_def_lines": sorted(rec_def),
        "fallback_def_lines": sorted(fall_def),
        "safe": breaks == 0 and fallbacks == 0 and n_rec <= 1,
    }


def main(argv=None) -> int:
    import torch

    args = argv if argv is not None else sys.argv[1:]
    check = "--check" in args
    names = {Path(a).name for a in args if a != "--check"}
    snippets = sorted(p for p in HERE.glob("c[0-9]*.py") if not names or p.name in names)
    if names - {p.name for p in snippets}:
        raise SystemExit(f"no such snippet here: {', '.join(sorted(names - {p.name for p in snippets}))}")
    rows = []
    for path in snippets:
        row = measure(path)
        rows.append(row)
        print(f"{row['file']:<34} graphs={row['compiles']} breaks={row['graph_breaks']} "
              f"recompiles={row['recompiles']} fallbacks={row['fallbacks']} "
              f"break_lines={row['break_lines']} recompile_lines={row['recompile_lines']} "
              f"{'safe' if row['safe'] else ''}")
    target = HERE / "truth.json"
    old = json.loads(target.read_text()) if target.exists() else {"snippets": []}
    if check:
        same = [r for r in old["snippets"] if not names or r["file"] in names] == rows
        print("truth.json is up to date" if same else "truth.json differs from this measurement")
        return 0 if same else 1
    if names:
        rows = sorted([r for r in old["snippets"] if r["file"] not in names] + rows, key=lambda r: r["file"])
    data = {"torch": torch.__version__, "backend": "eager", "snippets": rows}
    target.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {target} ({len(rows)} snippets, {sum(r['safe'] for r in rows)} safe)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
