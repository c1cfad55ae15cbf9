"""What a user sees when a script needs something not stood in, and the ``--scalars`` option.

Each test runs ``hpulint verify`` (its child process) on a small script and checks the report.
"""
from __future__ import annotations

import argparse
import json
import textwrap

import pytest

pytest.importorskip("torch")

from hpulint.lazy import cli  # noqa: E402


def script(tmp_path, body, name="train.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def verify(capsys, *argv):
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    code = cli.run(parser.parse_args([str(a) for a in argv]))
    out = capsys.readouterr().out
    return code, (json.loads(out) if "json" in argv else out)


DOCS = "docs/verify.md lists what the replay stands in for"


@pytest.mark.parametrize("line, name", [
    ("from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel",
     "torch_xla.distributed.fsdp"),
    ("import torch_xla.experimental.custom_kernel", "torch_xla.experimental.custom_kernel"),
    ("from torch_xla.core.xla_model import not_an_api", "torch_xla.core.xla_model.not_an_api"),
    ("y = xm.not_an_api(x)", "torch_xla.core.xla_model.not_an_api"),
    ("htcore.hpu.not_an_api()", "habana_frameworks.torch.hpu.not_an_api"),
    ("import habana_frameworks.torch.not_a_module", "habana_frameworks.torch.not_a_module"),
])
def test_a_name_not_stood_in_is_named_at_the_users_line(tmp_path, capsys, line, name):
    path = script(tmp_path, f"""\
        import torch
        import torch_xla.core.xla_model as xm
        import habana_frameworks.torch.core as htcore
        x = torch.ones(2, device=xm.xla_device())
        xm.mark_step()
        {line}
        print("not reached")
    """)
    code, data = verify(capsys, path, "--profile", "xla", "--format", "json")
    assert code == 1 and data["status"] == "error"
    err = data["error"]
    assert (err["file"], err["line"]) == (str(path), 6)
    assert err["message"] == f"hpulint verify does not stand in for {name}: {DOCS}"
    assert data["not_stood_in"] == [name]
    # the traceback shows the user's frames only, never the shims'
    files = [x.split('"')[1] for x in err["traceback"].splitlines() if 'File "' in x]
    assert files == [str(path)]
    assert "hpulint.lazy" not in err["traceback"] and "runpy" not in err["traceback"]
    assert f'File "{path}", line 6' in err["traceback"]
    assert (data["compiles"], data["mark_steps"]) == (1, 1)  # what ran before it is counted


def test_the_text_report_names_the_file_and_line_of_a_missing_name_in_a_helper(tmp_path, capsys):
    script(tmp_path, """\
        import torch_xla.core.xla_model as xm


        def world():
            return xm.xrt_world_size_v2()
    """, name="helpers.py")
    path = script(tmp_path, """\
        from helpers import world
        print(world())
    """)
    code, text = verify(capsys, path, "--profile", "xla")
    assert code == 1
    assert ("failed at helpers.py:5: NotStoodIn: hpulint verify does not stand in for "
            "torch_xla.core.xla_model.xrt_world_size_v2") in text.replace(str(tmp_path) + "/", "")


def test_a_script_that_catches_the_import_error_runs_on_and_the_report_names_it(tmp_path, capsys):
    path = script(tmp_path, """\
        import torch
        import torch_xla.core.xla_model as xm
        try:
            from torch_xla.experimental.custom_kernel import flash_attention
        except ImportError:
            flash_attention = None
        x = torch.ones(2, device=xm.xla_device()) * 3
        xm.mark_step()
    """)
    code, text = verify(capsys, path, "--profile", "xla")
    assert code == 0
    assert "ran to the end" in text
    assert "not stood in (asked for by the script): torch_xla.experimental.custom_kernel" in text
    assert "compilations       1" in text


ADAM = """\
    import torch
    import habana_frameworks.torch.core as htcore
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2).to("hpu")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(6):
        opt.zero_grad()
        model(torch.randn(3, 4).to("hpu")).pow(2).mean().backward()
        opt.step()
        htcore.mark_step()
"""


def test_stock_adam_on_hpu_does_not_recompile_every_step_by_default(tmp_path, capsys):
    path = script(tmp_path, ADAM)
    code, data = verify(capsys, path, "--format", "json")
    assert code == 0 and data["profile"] == "hpu"
    # the first step (bias corrections 1 - 0.9**1 and the like, the step count 1: constants) and
    # one graph for every later step: the scalars are graph data
    assert (data["compiles"], data["cached"]) == (2, 4)
    assert data["scalars"] == "data" and data["assumptions"] == []


def test_scalars_constant_is_the_worst_case_and_says_so(tmp_path, capsys):
    path = script(tmp_path, ADAM)
    code, text = verify(capsys, path, "--scalars", "constant")
    assert code == 0
    assert "compilations       6" in text  # a new bias correction every step
    assert ("assumption: every Python scalar operand is a graph constant (--scalars constant)"
            in text)
    assert "constant changed: " in text


def test_scalars_is_refused_where_it_does_not_apply(tmp_path, capsys):
    path = script(tmp_path, ADAM)
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    for other in (["--engine", "ltc"], ["--profile", "compile"]):
        assert cli.run(parser.parse_args([str(path), "--scalars", "constant", *other])) == 2
        assert "--scalars applies to the simulated device" in capsys.readouterr().err
