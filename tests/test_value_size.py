"""Values the analysis follows stay small, whatever the code does with a name.

A value shares its parts, so a name extended in each of many branches
(``if os.environ.get("port"): env_config += ["--port", ...]``, twenty-five times in a row in
opea-project/GenAIComps' agent config) makes a value whose tree doubles with every branch. Written
out (in the file's summary) or resolved part by part, it took all the memory of the machine. These
tests lint such files in a child process with 1.5 GB of address space, so the old behaviour fails
cleanly (a MemoryError, reported as an internal error) instead of taking the machine with it.
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap

from hpulint.analysis.values import MAX_SIZE, Arith, Join, Tup, V_SEQ, V_TENSOR, size

LIMIT = 1_500_000_000


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _lint(tmp_path, source: str) -> list:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'branches'\n")
    path = tmp_path / "config.py"
    path.write_text(source)
    done = subprocess.run([sys.executable, "-m", "hpulint", "check", str(path), "--no-cache",
                           "--format", "json", "--exit-zero"], capture_output=True, text=True,
                          timeout=240, preexec_fn=_limit, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr
    return [(f["line"], f["code"]) for f in json.loads(done.stdout)]


def _branches(n: int) -> str:
    return "import os\n\nenv_config = []\n" + "".join(
        f'if os.environ.get("k{i}") is not None:\n    env_config += ["--k{i}", os.environ["k{i}"]]\n'
        for i in range(n))


def test_a_name_extended_in_forty_branches_lints_in_bounded_memory(tmp_path):
    source = _branches(40) + textwrap.dedent("""
        import torch
        import habana_frameworks.torch.core as htcore

        def train(model, loader, optimizer):
            for x, y in loader:
                loss = model(x).sum()
                loss.backward()
                htcore.mark_step()
                optimizer.step()
                htcore.mark_step()
                print(loss.item())
        """)
    hazard = source.splitlines().index("        print(loss.item())") + 1
    assert _lint(tmp_path, source) == [(hazard, "HPU005")]


def test_a_tensor_extended_in_branches_is_still_a_tensor_below_the_bound(tmp_path):
    # eight branches stay far below the bound: `x` is followed as a tensor, and its host read in
    # the step loop is reported
    source = textwrap.dedent("""
        import torch
        import habana_frameworks.torch.core as htcore

        def train(model, loader, optimizer, flags):
            for x, y in loader:
        """) + "".join(f"        if flags[{i}]:\n            x = x + torch.ones(1)\n" for i in range(8)) + (
        "        loss = model(x).sum()\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "        htcore.mark_step()\n"
        "        if x.sum() > 0:\n"
        "            print('positive')\n")
    hazard = source.splitlines().index("        if x.sum() > 0:") + 1
    assert (hazard, "HPU008") in _lint(tmp_path, source)


def test_size_counts_shared_parts_each_time_and_stops_past_the_bound():
    v = V_SEQ
    for _ in range(10):
        v = Join((v, Arith((v, Tup((V_TENSOR,))))))
    # each step: a join, the old value twice, an arith, a tuple and its part: s' = 2 s + 4
    assert size(v) == 5 * 2 ** 10 - 4
    for _ in range(30):
        v = Join((v, Arith((v, Tup((V_TENSOR,))))))
    assert size(v) == MAX_SIZE + 1
