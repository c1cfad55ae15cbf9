"""`hpulint verify --profile compile` and `hpulint.lazy.device("compile")` on real Dynamo."""
from __future__ import annotations

import json
import textwrap

import pytest

torch = pytest.importorskip("torch")

from fixture_format import FIXTURES, parse_fixture  # noqa: E402
from hpulint.cli import main  # noqa: E402
from hpulint.lazy import device  # noqa: E402
from hpulint.lazy.replay import replay  # noqa: E402

REQUIRED = ["profile", "compiles", "graph_breaks", "recompiles", "fallbacks", "events", "findings"]


def test_json_report_has_the_issue_keys_and_dynamo_counts(capsys):
    fx = parse_fixture(FIXTURES / "HPU017" / "bad_string_tag_argument.py")
    assert main(["verify", "--profile", "compile", str(fx.path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data)[:len(REQUIRED)] == REQUIRED
    assert data["profile"] == "compile" and data["backend"] == "eager"
    assert {k: data[k] for k in fx.replay["compile"]} == fx.replay["compile"]
    recompiles = [e for e in data["events"] if e["kind"] == "recompile"]
    assert [e["guard_failures"][0]["guard"] for e in recompiles] == [
        f"tag == 'step-{i:03d}'" for i in range(7)]
    assert {(e["function"], e["def_line"], e["line"]) for e in recompiles} == {("scaled", 8, 14)}
    assert {e["guard_failures"][0]["line"] for e in recompiles} == {10}
    (fallback,) = [e for e in data["events"] if e["kind"] == "fallback"]
    assert (fallback["limit"], fallback["last_reason"]["guard"]) == (8, "tag == 'step-007'")


def test_text_report_names_break_reason_and_line(capsys):
    path = FIXTURES / "HPU014" / "bad_equal_and_unique.py"
    assert main(["verify", "--profile", "compile", str(path)]) == 0
    out = capsys.readouterr().out
    assert "(profile compile, real Dynamo, torch 2.13" in out
    assert "  graph breaks       2\n" in out
    assert "    1 x at line 10: " in out and "    1 x at line 12: Dynamic shape operator" in out
    assert "summary: 1 graph, 2 graph breaks, 0 recompilations and 0 eager fallbacks" in out


def test_options_that_do_not_go_together(capsys, tmp_path):
    script = tmp_path / "s.py"
    script.write_text("x = 1\n")
    assert main(["verify", str(script), "--backend", "eager"]) == 2
    assert main(["verify", str(script), "--profile", "compile", "--engine", "ltc"]) == 2
    err = capsys.readouterr().err
    assert "--backend applies to --profile compile only" in err
    assert "--engine does not apply" in err


def test_the_backend_does_not_change_what_dynamo_counts(capsys):
    fx = parse_fixture(FIXTURES / "HPU013" / "bad_if_on_loss.py")
    eager = replay(str(fx.path), profile="compile")
    aot = replay(str(fx.path), profile="compile", compile_backend="aot_eager")
    capsys.readouterr()
    assert aot["backend"] == "aot_eager"
    keys = ("compiles", "graph_breaks", "recompiles", "fallbacks")
    assert [aot[k] for k in keys] == [eager[k] for k in keys] == [fx.replay["compile"][k] for k in keys]


GAUDI_AND_XLA = textwrap.dedent('''\
    import torch
    import habana_frameworks.torch.core as htcore
    import torch_xla
    import torch_xla.core.xla_model as xm

    dev = xm.xla_device()
    model = torch.nn.Linear(8, 4).to(dev)
    gaudi = torch.compile(model, backend="hpu_backend", mode="max-autotune")
    for i in range(3):
        gaudi(torch.randn(16, 8)).sum().backward()
        htcore.mark_step()
    step = torch_xla.compile(lambda x: model(x).relu().sum())
    for i in range(3):
        step(torch.randn(4, 8, device=dev))
        xm.mark_step()
''')


def test_gaudi_and_xla_backends_run_here(tmp_path, capsys):
    script = tmp_path / "both.py"
    script.write_text(GAUDI_AND_XLA)
    result = replay(str(script), profile="compile")
    capsys.readouterr()
    assert result["status"] == "ok", result["error"]
    assert (result["compiles"], result["graph_breaks"], result["recompiles"]) == (2, 0, 0)
    assert result["mark_steps"] == 6


def test_max_steps_stops_at_a_step_marker(tmp_path, capsys):
    script = tmp_path / "loop.py"
    script.write_text(GAUDI_AND_XLA)
    result = replay(str(script), profile="compile", max_steps=2)
    capsys.readouterr()
    assert result["status"] == "stopped" and result["mark_steps"] == 2


def test_python_api_counts_and_restores_what_the_block_changed():
    real_compile = torch.compile
    limit = torch._dynamo.config.recompile_limit
    with device("compile") as d:
        torch._dynamo.config.recompile_limit = 3
        torch.compiler.set_stance("default")

        @torch.compile
        def f(x, tag):
            return x * len(tag)

        for i in range(6):
            f(torch.randn(2), f"t{i}")
        torch.compiler.set_stance("force_eager")
    assert torch._dynamo.eval_frame._stance.stance == "default"
    assert (d.compiles, d.graph_breaks, d.recompiles, d.fallbacks) == (3, 0, 2, 1)
    assert [e["kind"] for e in d.events] == ["recompile", "recompile", "fallback"]
    assert torch.compile is real_compile
    assert torch._dynamo.config.recompile_limit == limit


def test_python_api_graph_breaks():
    with device("compile") as d:
        model = torch.compile(torch.nn.Linear(4, 4))
        for _ in range(3):
            out = model(torch.randn(2, 4))
            out.sum().item()  # eager: no break
    assert (d.compiles, d.graph_breaks) == (1, 0)

    with device("compile") as d:
        @torch.compile
        def g(x):
            return x * x.max().item()

        for _ in range(3):
            g(torch.randn(3))
    assert d.graph_breaks == 1
    (br,) = [e for e in d.events if e["kind"] == "graph_break"]
    assert br["reason"] == "Unsupported Tensor.item() call with capture_scalar_outputs=False"


PARTIALS = textwrap.dedent('''\
    import functools

    import torch

    from losses import tagged


    def scaled(x, scale):
        return x * scale


    for i in range(3):
        torch.compile(functools.partial(scaled, scale=i))(torch.ones(3))
    for i in range(10):
        torch.compile(functools.partial(tagged, tag=f"step-{i:03d}"))(torch.ones(3))
''')
LOSSES = textwrap.dedent('''\
    def tagged(x, tag):
        if tag.endswith("0"):
            return x * 2
        return x + 1
''')


def test_guards_of_a_compiled_partial_name_the_wrapped_function_line(tmp_path, capsys, monkeypatch):
    # Dynamo compiles a functools.partial through torch's own wrapper (external_utils.py): the
    # failed guards come from the script and from the module it imports, not from that file
    (tmp_path / "losses.py").write_text(LOSSES)
    script = tmp_path / "partials.py"
    script.write_text(PARTIALS)
    assert main(["verify", "--profile", "compile", str(script), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["recompiles"], data["fallbacks"]) == (7, 1)
    here, losses = str(script.resolve()), str((tmp_path / "losses.py").resolve())
    guards = [(e["line"], g.get("file"), g.get("line"), g["guard"])
              for e in data["events"] if e["kind"] == "recompile" for g in e["guard_failures"][:1]]
    assert guards[0] == (13, here, 9, "fn.keywords['scale'] == 0")
    assert guards[2:] == [(15, losses, 2, f"fn.keywords['tag'] == 'step-{i:03d}'") for i in range(5)]
    (fallback,) = [e for e in data["events"] if e["kind"] == "fallback"]
    reason = fallback["last_reason"]
    assert (reason["file"], reason["line"], reason["guard"]) == (losses, 2, "fn.keywords['tag'] == 'step-005'")

    monkeypatch.chdir(tmp_path)
    assert main(["verify", "--profile", "compile", "partials.py"]) == 0
    out = capsys.readouterr().out
    assert "guard failed: fn.keywords['scale'] == 0 (line 9)\n" in out
    assert "fn.keywords['tag'] == 'step-004' (losses.py:2)\n" in out
    assert "last guard failure: fn.keywords['tag'] == 'step-005' (losses.py:2);" in out


def test_scripts_replayed_one_after_another_in_one_process_guard_their_own_globals(tmp_path):
    """Dynamo caches the module its guards import as `__main__` (a torch module's compiled forward
    calls the script's layer, whose globals it reaches through that import): the second script's
    guards on its own module-level class must not be looked up in the first script's module."""
    from hpulint.lazy.replay import replay

    for name in ("First", "Second"):
        script = tmp_path / f"{name.lower()}.py"
        script.write_text(
            "import torch\n"
            f"class {name}(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, x):\n"
            "        return x.sign()\n"
            "    @staticmethod\n"
            "    def backward(ctx, g):\n"
            "        return g\n"
            "class Layer(torch.nn.Module):\n"
            "    def forward(self, x):\n"
            f"        return {name}.apply(x) * 2\n"
            "step = torch.compile(torch.nn.Sequential(Layer()))\n"
            "for _ in range(3):\n"
            "    step(torch.randn(4))\n")
        result = replay(str(script), profile="compile")
        assert (result["status"], result["compiles"], result["graph_breaks"]) == ("ok", 1, 0), result["error"]


def test_a_guard_specialised_at_its_first_use_names_the_line_that_needed_it():
    from hpulint.lazy.dynamo_logs import guard_failures

    message = (
        "Recompiling function forward in /w/model.py:40\n"
        "    triggered by the following guard failure(s):\n"
        "    - 0/1: 2 <= x.size()[1] <= 16  # b, n, _ = x.shape  # w/model.py:47 in forward (user code "
        "shown is first use of this value--the guard itself is not due user code but due to 0/1 "
        "specialization in the framework) and if seq_len > self.cached:  # w/model.py:28 in forward "
        "(_dynamo/variables/tensor.py:2606 in evaluate_expr)\n"
        "    - 0/0: 2 <= ids.size()[1] <= 9  # return F.embedding(  # nn/modules/sparse.py:189 in forward "
        "(user code shown is first use of this value) and if ids.shape[-1] < n:  # w/proc.py:16 in __call__ "
        "(_dynamo/variables/tensor.py:2606 in evaluate_expr)\n"
        "    - 0/2: L['n'] == 3  # if n == 3:  # w/model.py:12 in forward\n")
    got = [(f["entry"], f.get("file"), f.get("line"), f.get("code")) for f in guard_failures(message)]
    assert got == [("0/1", "w/model.py", 28, "if seq_len > self.cached:"),
                   ("0/0", "w/proc.py", 16, "if ids.shape[-1] < n:"),
                   ("0/2", "w/model.py", 12, "if n == 3:")]
