"""``hpulint verify`` end to end (child process, CLI): scripts that fail, exit, hang or run long
always give a report of what ran, never a hang or a traceback from hpulint.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from hpulint.lazy import cli  # noqa: E402
from hpulint.lazy.replay import run  # noqa: E402
from hpulint.model import Finding  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def script(tmp_path, body, name="train.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


GAUDI_LOOP = """\
    import torch
    import habana_frameworks.torch.core as htcore
    x = torch.ones(3).to("hpu")
    for step in range(STEPS):
        x = x * 2
        htcore.mark_step()
        CHECK
"""


def gaudi(tmp_path, steps="5", check="pass", **kw):
    return script(tmp_path, GAUDI_LOOP.replace("STEPS", steps).replace("CHECK", check), **kw)


def verify(capsys, *argv):
    """Run the CLI as ``hpulint verify`` would; return (exit code, parsed JSON or text)."""
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args([str(a) for a in argv])
    code = cli.run(args)
    out = capsys.readouterr().out
    return code, (json.loads(out) if "--format" in argv and "json" in argv else out)


def test_script_that_raises_reports_what_ran_and_the_user_traceback(tmp_path, capsys):
    path = gaudi(tmp_path, check='if step == 2: raise ValueError("boom at step 2")')
    code, data = verify(capsys, path, "--format", "json")
    assert code == 1
    assert data["status"] == "error"
    assert data["mark_steps"] == 3 and data["compiles"] == 1 and data["cached"] == 2
    err = data["error"]
    assert (err["type"], err["message"], err["line"]) == ("ValueError", "boom at step 2", 7)
    assert "hpulint" not in err["traceback"] and "runpy" not in err["traceback"]
    assert str(path) in err["traceback"]


def test_text_report_of_a_failure(tmp_path, capsys):
    path = gaudi(tmp_path, check='if step == 2: raise ValueError("boom at step 2")')
    code, text = verify(capsys, path)
    assert code == 1
    assert "failed at line 7: ValueError: boom at step 2" in text
    assert "step markers       3" in text
    assert "Traceback (most recent call last):" in text


def test_script_that_exits_early(tmp_path, capsys):
    path = gaudi(tmp_path, check="if step == 1: raise SystemExit(3)")
    code, data = verify(capsys, path, "--format", "json")
    assert (code, data["status"], data["exit_code"], data["mark_steps"]) == (1, "exit", 3, 2)
    path = gaudi(tmp_path, check="if step == 1: raise SystemExit(0)")
    code, data = verify(capsys, path, "--format", "json")
    assert (code, data["status"], data["mark_steps"]) == (0, "ok", 2)


def test_infinite_loop_is_stopped_by_the_timeout_with_its_counts(tmp_path, capsys):
    path = script(tmp_path, """\
        import torch
        import habana_frameworks.torch.core as htcore
        x = torch.ones(3).to("hpu")
        while True:
            x = x * 1.5
            htcore.mark_step()
    """)
    code, data = verify(capsys, path, "--timeout", "2", "--format", "json")
    assert code == 1
    assert data["status"] == "timeout"
    assert data["stopped"] == "timed out after 2.0 s (--timeout)"
    assert data["mark_steps"] > 10 and data["compiles"] == 1
    assert data["cached"] == data["mark_steps"] - 1
    assert data["wall_time"] < 120  # stopped long before the loop would end (bound loose for loaded machines)


def test_a_script_blocked_in_sleep_times_out_too(tmp_path):
    path = script(tmp_path, """\
        import time
        print("sleeping", flush=True)
        time.sleep(600)
    """)
    result = run(str(path), timeout=2)
    assert result["status"] == "timeout" and result["stdout"] == "sleeping"
    assert result["wall_time"] < 120  # not the 600 s of the sleep


def test_max_steps_stops_cleanly_after_n_markers(tmp_path, capsys):
    path = gaudi(tmp_path, steps="1000")
    code, data = verify(capsys, path, "--max-steps", "7", "--format", "json")
    assert (code, data["status"], data["mark_steps"]) == (0, "stopped", 7)
    assert data["stopped"] == "stopped after 7 step markers (--max-steps)"
    assert (data["compiles"], data["cached"]) == (1, 6)


def test_a_process_that_dies_is_reported_not_raised(tmp_path):
    path = script(tmp_path, """\
        import os
        print("about to die", flush=True)
        os._exit(7)
    """)
    result = run(str(path), timeout=60)
    assert result["status"] == "crashed"
    assert "status 7" in result["error"]["message"]
    assert result["stdout"] == "about to die"


def test_the_script_gets_its_own_main_argv_and_directory(tmp_path, capsys):
    (tmp_path / "helper.py").write_text("VALUE = 41\n")
    path = script(tmp_path, """\
        import sys
        import helper
        assert __name__ == "__main__", __name__
        assert sys.argv[1:] == ["--epochs", "3"], sys.argv
        assert sys.argv[0] == __file__
        print("ok", helper.VALUE + 1)
    """)
    code, data = verify(capsys, path, "--format", "json", "--", "--epochs", "3")
    assert (code, data["status"], data["stdout"]) == (0, "ok", "ok 42")


def test_usage_errors_exit_2(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    assert cli.run(parser.parse_args([str(tmp_path / "missing.py")])) == 2
    path = gaudi(tmp_path)
    assert cli.run(parser.parse_args([str(path), "--timeout", "0"])) == 2
    assert cli.run(parser.parse_args([str(path), "--max-steps", "0"])) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "--timeout must be positive" in err
    assert cli.main(["--profile", "tpu", str(path)]) == 2


def test_findings_are_confirmed_in_the_report(monkeypatch, capsys):
    fixture = ROOT / "fixtures" / "HPU001" / "bad_vdiffusion.py"
    lines = [i for i, t in enumerate(fixture.read_text().splitlines(), 1) if "= steps[i" in t]
    assert len(lines) == 2
    found = [Finding("HPU001", "", "", str(fixture), line, 1, line, 1) for line in lines]
    monkeypatch.setattr(cli, "_lint", lambda source, path: (found, None))
    code, data = verify(capsys, fixture, "--profile", "xla", "--format", "json")
    assert code == 0
    assert [(f["code"], f["line"], f["status"]) for f in data["findings"]] == [
        ("HPU001", line, "confirmed") for line in lines]
    assert data["unexplained"] == [{"kind": "sync", "line": 38, "file": str(fixture),
                                    "what": "cpu()", "count": 1}]
    assert (data["profile"], data["compiles"], data["mark_steps"]) == ("xla", 10, 10)


def test_python_dash_m_entry_point(tmp_path):
    path = script(tmp_path, """\
        import torch
        import torch_xla.core.xla_model as xm
        device = xm.xla_device()
        x = torch.ones(2, device=device)
        for step in range(12):
            x = x[:2] + step  # the loop counter: data (but 0 and 1); a constant when assumed
            xm.mark_step()
    """)
    out = subprocess.run([sys.executable, "-m", "hpulint.lazy", str(path), "--scalars",
                          "constant"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "compilations       12" in out.stdout
    assert "pt-xla-profiler: CompileTime too frequent: 12 counts during 12 steps" in out.stdout
    out = subprocess.run([sys.executable, "-m", "hpulint.lazy", str(path), "--profile", "xla",
                          "--format", "json"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    data = json.loads(out.stdout)
    # xla: step 0 (with the ones() factory), + 1 (a special scalar), then one graph with data
    assert (data["compiles"], data["cached"], data["too_frequent"]) == (3, 9, [])
