"""The compile rules (HPU012-HPU017) and the per-function mode, statically (no torch): where
Dynamo traces, the compile rules report and the lazy-mode rules stay quiet; in the eager code
around compiled code the lazy-mode rules stay quiet too; lazy-mode code is unchanged."""
from __future__ import annotations

import json
from textwrap import dedent

import pytest

from hpulint import Config, lint_source
from hpulint.cli import main


def found(src: str, **cfg) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config(**cfg))]


def messages(src: str, code: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code == code]


def project(tmp_path, files: dict, capsys, *extra) -> list:
    for name, text in files.items():
        (tmp_path / name).write_text(dedent(text))
    main(["--no-cache", "--format", "json", *extra, str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    rows = out if isinstance(out, list) else out["findings"]
    return sorted((r["code"], r["path"].rsplit("/", 1)[-1], r["line"]) for r in rows)


STEP = """\
import torch
import torch.nn as nn

model = nn.Linear(4, 1)


@torch.compile
def step(x):
    loss = model(x).pow(2).mean()
    print(loss.item())
    if loss > 1.0:
        loss = loss * 0.5
    keep = x[x > 0]
    return loss + keep.sum()


for i in range(10):
    step(torch.randn(8, 4)).backward()
"""


def test_compiled_function_gets_compile_rules_not_lazy_rules():
    assert found(STEP) == [("HPU012", 10), ("HPU013", 11), ("HPU014", 13)]


def test_the_same_function_not_compiled_gets_the_lazy_rules():
    lazy = STEP.replace("@torch.compile\n", "")
    codes = {c for c, _ in found(lazy)}
    assert codes & {"HPU005", "HPU008", "HPU006"} and not codes & {"HPU012", "HPU013", "HPU014"}


def test_messages_name_the_dynamo_behaviour_and_the_fix():
    assert "graph breaks here" in messages(STEP, "HPU012")[0] and "eager code" in messages(STEP, "HPU012")[0]
    assert "torch.where" in messages(STEP, "HPU013")[0]
    assert "capture_dynamic_output_shape_ops" in messages(STEP, "HPU014")[0]
    storm = messages("""\
        import torch

        @torch.compile
        def scaled(x, tag):
            return x * len(tag)

        for step in range(20):
            scaled(torch.randn(4), "step-" + str(step))
        """, "HPU017")
    assert len(storm) == 1 and "recompiles" in storm[0] and "eager fallback" in storm[0]


def test_not_graph_breaks_on_torch_2_13_stay_quiet():
    # .cpu() is traced as a copy, assert on a tensor as an assertion, a mask store as index_put,
    # a shape test is a guard, capture_scalar_outputs keeps .item() in the graph
    assert found("""\
        import torch

        @torch.compile
        def f(x):
            assert (x >= 0).all()
            x = x.clone()
            x[x > 1] = 1.0
            if x.shape[-1] > 4:
                x = x[..., :4]
            return x.cpu() * 2

        for _ in range(5):
            f(torch.rand(3, 8))
        """) == []
    assert found("""\
        import torch
        torch._dynamo.config.capture_scalar_outputs = True

        @torch.compile
        def f(x):
            return x * x.sum().item()

        for _ in range(5):
            f(torch.rand(3))
        """) == []


def test_host_read_in_the_eager_loop_around_a_compiled_model_is_quiet():
    assert found("""\
        import torch
        import torch.nn as nn

        model = torch.compile(nn.Linear(4, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(10):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            loss.backward()
            opt.step()
            print(loss.item())
        """) == []


GAUDI_LOOP = """\
import os
os.environ["PT_HPU_LAZY_MODE"] = "{mode}"
import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn

model = nn.Linear(4, 1).to("hpu")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    loss = model(torch.randn(8, 4, device="hpu")).pow(2).mean()
    loss.backward()
    opt.step()
    print(loss.item())
"""


def test_gaudi_eager_mode_env_silences_the_lazy_rules():
    assert found(GAUDI_LOOP.format(mode="0")) == []
    lazy = {c for c, _ in found(GAUDI_LOOP.format(mode="1"))}
    assert {"HPU004", "HPU005"} <= lazy


def test_openxla_compiled_step_needs_no_mark_step():
    src = """\
        import torch
        import torch.nn as nn
        import torch_xla

        device = torch_xla.device()
        model = nn.Linear(4, 1).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def train_step(x):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            return loss

        {call}
        for step in range(10):
            step_fn(torch.randn(8, 4, device=device))
        """
    # no mark_step needed (HPU004 quiet); Dynamo does not trace the optimizer's zero_grad nor the
    # backward pass (HPU012)
    assert found(src.replace("{call}", 'step_fn = torch.compile(train_step, backend="openxla")')) == [
        ("HPU012", 10), ("HPU012", 12)]
    assert "HPU004" in {c for c, _ in found(src.replace("{call}", "step_fn = train_step"))}


def test_configured_target_compile_and_lazy_targets():
    loop = """\
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(10):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            loss.backward()
            opt.step()
            print(loss.item())
        """
    assert ("HPU005", 10) in found(loop)
    assert found(loop, target="compile") == []


def test_compiled_region_across_files(tmp_path, capsys):
    rows = project(tmp_path, {
        "net.py": """\
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)

                def forward(self, x):
                    h = self.fc(x)
                    if h.mean() > 0:
                        h = h * 2
                    return h
            """,
        "train.py": """\
            import torch
            from net import Net

            model = torch.compile(Net())
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for step in range(10):
                loss = model(torch.randn(8, 4)).sum()
                loss.backward()
                opt.step()
                print(loss.item())
            """,
    }, capsys)
    assert rows == [("HPU013", "net.py", 11)]


@pytest.mark.parametrize("loop, expected", [
    ("for length in range(4, 40):", [("HPU015", 4)]),
    ("for length in (16, 32, 64):", [("HPU015", 4)]),  # three sizes: 3 graphs, 2 recompiles
    ("for length in (32, 64):", []),  # two buckets: one recompile, what automatic dynamic costs too
])
def test_dynamic_false_needs_sizes_that_keep_changing(loop, expected):
    assert found(f"""\
        import torch
        import torch.nn as nn

        model = torch.compile(nn.Linear(8, 8), dynamic=False)
        {loop}
            model(torch.randn(length, 8))
        """) == expected


def test_mark_dynamic_before_the_call_is_quiet():
    assert found("""\
        import torch
        import torch.nn as nn

        model = torch.compile(nn.Linear(8, 8), dynamic=False)
        for n in range(4, 40):
            x = torch.randn(n, 8)
            torch._dynamo.mark_dynamic(x, 0)
            model(x)
        """) == []


def test_int_and_float_arguments_are_not_reported():
    # automatic dynamic: an int or float argument recompiles once, then it is symbolic
    assert found("""\
        import torch

        @torch.compile
        def shift(x, offset, lr):
            return x * lr + offset

        for step in range(100):
            shift(torch.randn(4), step, 0.1 * step)
        """) == []


def test_print_and_logging_break_the_graph_whatever_they_print():
    # measured on torch 2.13: print("hello") and log.info("step done") are one break each
    src = """\
        import logging
        import torch

        log = logging.getLogger("x")

        @torch.compile
        def f(x, step):
            print("hello")
            y = x * 2
            log.info("step done")
            return y + 1

        for i in range(4):
            f(torch.randn(4), i)
        """
    assert found(src) == [("HPU012", 8), ("HPU012", 10)]
    assert all("does not trace print and logging" in m for m in messages(src, "HPU012"))


def test_global_read_through_a_helper_the_compiled_function_calls():
    # measured on torch 2.13: 8 graphs, 7 recompiles, an eager fallback
    assert found("""\
        import torch

        global_step = 0

        def scale():
            return 1.0 / (global_step + 1)

        @torch.compile
        def f(x):
            return x * scale()

        for i in range(12):
            f(torch.randn(4))
            global_step += 1
        """) == [("HPU017", 13)]


def test_dynamic_false_fix_is_safe_only_for_backends_that_compile_dynamic_shapes():
    from hpulint.fix import fix_source

    src = dedent("""\
        import torch
        import torch.nn as nn

        model = torch.compile(nn.Linear(8, 8){backend}, dynamic=False)
        for n in range(4, 40):
            model(torch.randn(n, 8))
        """)
    plain = fix_source(src.format(backend=""), "t.py", Config())
    assert "model = torch.compile(nn.Linear(8, 8))\n" in plain.fixed and plain.remaining == []
    hpu = src.format(backend=', backend="hpu_backend"')
    assert fix_source(hpu, "t.py", Config()).fixed == hpu  # unsafe: not applied by default
    forced = fix_source(hpu, "t.py", Config(), unsafe=True).fixed
    assert 'model = torch.compile(nn.Linear(8, 8), backend="hpu_backend")\n' in forced


ASSERTS = """\
import torch


@torch.compile
def check(x):
    {}
    return x * 2
"""


@pytest.mark.parametrize("form, expected", [
    ("assert not torch.isnan(x.sum())", [("HPU013", 6)]),  # `not` jumps the other way: a break
    ("assert x.sum() > 0 and x.dim() == 1", [("HPU013", 6)]),  # a tensor before the last operand
    ("assert x.sum() > 0 or x.dim() == 1", [("HPU013", 6)]),
    ("assert x.dim() == 1 and not torch.isnan(x).any()", [("HPU013", 6)]),
    ("assert torch.isfinite(x).all(), 'inf'", []),  # one tensor test: traced as an assertion
    ("assert ~torch.isnan(x.sum())", []),
    ("assert x.dim() == 1 and x.sum() > 0", []),  # the tensor is the last operand
    ("assert not x.dim() == 3", []),  # no tensor
])
def test_assert_forms_that_break_the_graph(form, expected):
    assert found(ASSERTS.format(form)) == expected


def test_assert_not_in_eager_code_is_quiet():
    assert found("""\
        import torch

        x = torch.randn(4)
        assert not torch.isnan(x).any()
        """) == []


@pytest.mark.parametrize("line, expected", [
    ("loss.backward()", [("HPU012", 9)]),
    ("torch.autograd.grad(loss, list(model.parameters()))", [("HPU012", 9)]),
    ("g = np.random.uniform(0.8, 1.2)", [("HPU012", 9)]),  # a Python float: read to the host
    ("g = np.random.rand()", [("HPU012", 9)]),
    ("g = np.random.permutation(4)", [("HPU012", 9)]),  # not in torch's NumPy
    ("g = np.random.uniform(0.8, 1.2, size=4)", []),  # sized: a tensor in the graph
    ("g = np.random.randn(4)", []),
    ("np.random.seed(0)", []),
    ("g = np.sqrt(2.0)", []),
])
def test_backward_and_numpy_random_in_a_compiled_function(line, expected):
    assert found(f"""\
        import numpy as np
        import torch

        model = torch.nn.Linear(4, 1)

        @torch.compile
        def step(x):
            loss = model(x).pow(2).mean()
            {line}
            return loss
        """) == expected


def test_backward_message_names_the_fix():
    [msg] = messages("""\
        import torch

        model = torch.nn.Linear(4, 1)

        @torch.compile
        def step(x):
            loss = model(x).pow(2).mean()
            loss.backward()
            return loss
        """, "HPU012")
    assert "Dynamo does not trace a backward pass" in msg and "call `.backward()` in the eager code" in msg


def test_backward_in_the_eager_loop_is_quiet():
    assert found("""\
        import numpy as np
        import torch

        model = torch.compile(torch.nn.Linear(4, 1))
        for _ in range(3):
            gain = np.random.uniform(0.8, 1.2)
            model(torch.randn(8, 4) * gain).sum().backward()
        """) == []


@pytest.mark.parametrize("line, expected", [
    ("t = time.time()", [("HPU012", 11)]),  # a C builtin Dynamo skips
    ("t = time.perf_counter()", [("HPU012", 11)]),
    ("keep = random.random() < 0.5", [("HPU012", 11)]),
    ("k = random.choice([1, 2])", [("HPU012", 11)]),
    ("k = random.uniform(0.5, 1.5)", []),  # traced by Dynamo
    ("k = random.randint(0, 3)", []),
    ("raw = copy.deepcopy(loss)", [("HPU012", 11)]),  # a tensor
    ("net = copy.deepcopy(model)", [("HPU012", 11)]),  # a module holds tensors
    ("cfg = copy.deepcopy({'scale': 2})", []),  # numbers: copied in the graph
])
def test_calls_dynamo_skips_in_a_compiled_function(line, expected):
    assert found(f"""\
        import copy
        import random
        import time
        import torch

        model = torch.nn.Linear(4, 1)

        @torch.compile
        def step(x):
            loss = model(x).pow(2).mean()
            {line}
            return loss
        """) == expected


def test_is_compiling_branches_are_left_out_of_the_graph():
    assert found("""\
        import time
        import torch

        @torch.compile
        def step(x):
            y = x * 2
            if not torch.compiler.is_compiling():
                print(y.sum().item(), time.time())
            if torch._dynamo.is_compiling():
                return y
            else:
                print(y.max().item())
            if torch.compiler.is_compiling():
                print(y.min().item())
            return y
        """) == [("HPU012", 14)]
