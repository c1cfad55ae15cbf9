"""`hpulint --fix`: the exact fixed text, safe vs unsafe, idempotence, and nothing lost on bad input."""
from __future__ import annotations

import io
import os
import stat
import sys
import textwrap

import pytest

from hpulint import Config, lint_source
from hpulint.cli import main
from hpulint.fix import fix_source
from snippets import GAUDI_LOOP


def dedent(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")



CASES = {
    "hpu004 gaudi: after backward and after step": (GAUDI_LOOP, False, dedent("""
        import torch
        import habana_frameworks.torch.core as htcore


        def train(model, loader, optimizer):
            for data, target in loader:
                optimizer.zero_grad()
                loss = model(data).sum()
                loss.backward()
                htcore.mark_step()
                optimizer.step()
                htcore.mark_step()
    """)),
    "hpu004 gaudi alias from a from-import": (
        GAUDI_LOOP.replace("import habana_frameworks.torch.core as htcore",
                           "from habana_frameworks.torch.core import mark_step\ndevice = 'hpu'"),
        False,
        dedent("""
        import torch
        from habana_frameworks.torch.core import mark_step
        device = 'hpu'


        def train(model, loader, optimizer):
            for data, target in loader:
                optimizer.zero_grad()
                loss = model(data).sum()
                loss.backward()
                mark_step()
                optimizer.step()
                mark_step()
        """)),
    "hpu004 device string only: the import is added once": (
        GAUDI_LOOP.replace("import habana_frameworks.torch.core as htcore\n", "DEVICE = torch.device('hpu')\n"),
        False,
        dedent("""
        import torch
        import habana_frameworks.torch.core as htcore
        DEVICE = torch.device('hpu')


        def train(model, loader, optimizer):
            for data, target in loader:
                optimizer.zero_grad()
                loss = model(data).sum()
                loss.backward()
                htcore.mark_step()
                optimizer.step()
                htcore.mark_step()
        """)),
    "hpu004 gaudi: only the missing marker": (
        GAUDI_LOOP.replace("        optimizer.step()\n", "        optimizer.step()\n        htcore.mark_step()\n"),
        False,
        GAUDI_LOOP.replace("        loss.backward()\n", "        loss.backward()\n        htcore.mark_step()\n")
        .replace("        optimizer.step()\n", "        optimizer.step()\n        htcore.mark_step()\n"),
    ),
    "hpu004 xla: after the step, with the file's alias": (
        GAUDI_LOOP.replace("import habana_frameworks.torch.core as htcore", "from torch_xla.core import xla_model as xm"),
        False,
        GAUDI_LOOP.replace("import habana_frameworks.torch.core as htcore", "from torch_xla.core import xla_model as xm")
        + "        xm.mark_step()\n",
    ),
    "hpu003 safe: collect in a list, one cat after the loop": (dedent("""
        import torch


        def evaluate(model, loader):
            preds = torch.zeros(0, 4)
            # every batch
            for x in loader:
                out = model(x)
                preds = torch.cat((preds, out), dim=0)
            return preds
    """), False, dedent("""
        import torch


        def evaluate(model, loader):
            preds = torch.zeros(0, 4)
            # every batch
            preds_parts = [preds]
            for x in loader:
                out = model(x)
                preds_parts.append(out)
            preds = torch.cat(preds_parts, dim=0)
            return preds
    """)),
    "hpu001 unsafe: the seed's roll rewrite": (dedent("""
        import torch


        def sample(model, x, num_steps):
            steps = torch.linspace(1, 0, num_steps + 1, device=x.device)
            for i in range(4, num_steps):
                t_1 = steps[i]
                t_2 = steps[i + 1]
                x = model(x, t_1, t_2)
            return x
    """), True, dedent("""
        import torch


        def sample(model, x, num_steps):
            steps = torch.linspace(1, 0, num_steps + 1, device=x.device)
            steps = torch.roll(steps, shifts=-4, dims=0)
            for i in range(4, num_steps):
                t_1 = steps[0]
                t_2 = steps[1]
                x = model(x, t_1, t_2)
                steps = torch.roll(steps, shifts=-1, dims=0)
            return x
    """)),
    "hpu001 unsafe: a device index when the pattern is not sequential": (dedent("""
        import torch as th


        def train(model, loader, table: th.Tensor):
            for i, batch in enumerate(loader):
                w = table[:, i]
                model(batch * w)
    """), True, dedent("""
        import torch as th


        def train(model, loader, table: th.Tensor):
            for i, batch in enumerate(loader):
                w = table[:, th.tensor(i, device=table.device)]
                model(batch * w)
    """)),
    "hpu002 unsafe: identity of two parameters": (dedent("""
        import torch
        from torch import nn


        class MHA(nn.Module):
            def forward(self, query, key, value):
                if torch.equal(query, key) and key.equal(value):
                    return query
                same = torch.equal(query, value) == True
                return same
    """), True, dedent("""
        import torch
        from torch import nn


        class MHA(nn.Module):
            def forward(self, query, key, value):
                if query is key and key is value:
                    return query
                same = (query is value) == True
                return same
    """)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fixed_text(name):
    src, unsafe, expected = CASES[name]
    out = fix_source(src, "t.py", Config(), unsafe=unsafe)
    assert out.errors == []
    assert out.fixed == expected
    assert out.remaining == [] and out.applied
    again = fix_source(out.fixed, "t.py", Config(), unsafe=True)
    assert again.fixed == out.fixed and not again.applied  # idempotent
    compile(out.fixed, "t.py", "exec")


def test_unsafe_fixes_wait_for_the_flag():
    src = CASES["hpu001 unsafe: the seed's roll rewrite"][0]
    out = fix_source(src, "t.py", Config())
    assert out.fixed == src and out.hidden_unsafe() == 2
    assert fix_source(src, "t.py", Config(unsafe_fixes=True), unsafe=True).changed


def test_hpu003_has_no_fix_when_the_loop_reads_the_accumulator():
    # the list would not hold the running total that print() reads: no fix, even unsafe
    src = dedent("""
        import torch


        def evaluate(model, loader):
            preds = torch.zeros(0)
            for x in loader:
                preds = torch.cat([preds, model(x)])
                print(preds.shape)
            return preds
    """)
    (f,) = lint_source(src)
    assert f.code == "HPU003" and f.fix is None
    assert not fix_source(src, "t.py", Config()).changed
    assert not fix_source(src, "t.py", Config(), unsafe=True).changed


def test_accumulators_that_live_across_calls_have_no_fix():
    src = dedent("""
        import torch


        class Report(dict):
            def accumulate(self, report, keys):
                for key in keys:
                    self[key] = torch.cat((self[key], report[key]), dim=0)
    """)
    (f,) = lint_source(src)
    assert f.code == "HPU003" and f.fix is None


def run(args, cwd, capsys, monkeypatch, stdin=None):
    monkeypatch.chdir(cwd)
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_fix_diff_show_fixes_and_exit_codes(tmp_path, capsys, monkeypatch):
    p = tmp_path / "t.py"
    p.write_text(GAUDI_LOOP)
    code, out, _ = run(["--diff", "t.py"], tmp_path, capsys, monkeypatch)
    assert code == 1 and p.read_text() == GAUDI_LOOP
    assert "+        htcore.mark_step()" in out and out.startswith("--- a/t.py\n+++ b/t.py\n")
    code, out, _ = run(["--fix", "--show-fixes", "t.py"], tmp_path, capsys, monkeypatch)
    assert code == 0
    assert out == ("Fixed 1 finding:\n- t.py:\n    1 \u00d7 HPU004 (missing-mark-step)\n"
                   "Found 1 finding (1 fixed, 0 remaining; 1 file checked).\n")
    assert p.read_text() == CASES["hpu004 gaudi: after backward and after step"][2]
    mtime = p.stat().st_mtime_ns
    assert run(["--fix", "t.py"], tmp_path, capsys, monkeypatch)[0] == 0
    assert p.stat().st_mtime_ns == mtime  # an unchanged file is never rewritten
    assert run(["--diff", "t.py"], tmp_path, capsys, monkeypatch)[0] == 0
    p.write_text(GAUDI_LOOP)
    assert run(["--fix", "--exit-non-zero-on-fix", "t.py"], tmp_path, capsys, monkeypatch)[0] == 1


def test_cli_fix_exits_non_zero_while_findings_remain(tmp_path, capsys, monkeypatch):
    (tmp_path / "v.py").write_text(CASES["hpu001 unsafe: the seed's roll rewrite"][0])
    code, out, _ = run(["--fix", "v.py"], tmp_path, capsys, monkeypatch)
    assert code == 1
    assert out.endswith("Found 2 findings (0 fixed, 2 remaining; 1 file checked).\n2 more fixes available with `--unsafe-fixes`.\n")
    (tmp_path / "pyproject.toml").write_text("[tool.hpulint]\nunsafe-fixes = true\n")
    assert run(["--fix", "v.py"], tmp_path, capsys, monkeypatch)[0] == 0
    assert "torch.roll" in (tmp_path / "v.py").read_text()


def test_fixable_and_unfixable_config(tmp_path, capsys, monkeypatch):
    p = tmp_path / "t.py"
    p.write_text(GAUDI_LOOP)
    (tmp_path / "pyproject.toml").write_text('[tool.hpulint]\nunfixable = ["HPU004"]\n')
    code, out, _ = run(["--fix", "t.py"], tmp_path, capsys, monkeypatch)
    assert code == 1 and p.read_text() == GAUDI_LOOP
    code, out, _ = run(["t.py"], tmp_path, capsys, monkeypatch)
    assert "[*]" not in out


def test_a_suppressed_finding_is_never_fixed(tmp_path, capsys, monkeypatch):
    src = GAUDI_LOOP.replace("for data, target in loader:", "for data, target in loader:  # noqa: HPU004")
    p = tmp_path / "t.py"
    p.write_text(src)
    assert run(["--fix", "t.py"], tmp_path, capsys, monkeypatch)[0] == 0
    assert p.read_text() == src


def test_stdin_fix_writes_the_fixed_text_to_stdout(tmp_path, capsys, monkeypatch):
    code, out, err = run(["--fix", "-"], tmp_path, capsys, monkeypatch, stdin=GAUDI_LOOP)
    assert code == 0 and out == CASES["hpu004 gaudi: after backward and after step"][2]
    assert "1 fixed" in err


def test_crlf_encoding_bom_permissions_and_trailing_newline_are_kept(tmp_path, capsys, monkeypatch):
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(GAUDI_LOOP.replace("\n", "\r\n").encode())
    os.chmod(crlf, 0o750)
    latin = tmp_path / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n# caf\xe9\n" + GAUDI_LOOP).encode("latin-1"))
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + GAUDI_LOOP.rstrip("\n").encode())
    assert run(["--fix", "crlf.py", "latin.py", "bom.py"], tmp_path, capsys, monkeypatch)[0] == 0
    fixed = CASES["hpu004 gaudi: after backward and after step"][2]
    assert crlf.read_bytes() == fixed.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(crlf.stat().st_mode) == 0o750
    assert latin.read_bytes() == ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + fixed).encode("latin-1")
    assert bom.read_bytes() == b"\xef\xbb\xbf" + fixed.rstrip("\n").encode()


def test_syntax_error_and_read_only_files_are_reported_and_untouched(tmp_path, capsys, monkeypatch):
    broken = tmp_path / "broken.py"
    broken.write_text("for x in y:\n    loss.backward(\n")
    ro = tmp_path / "ro.py"
    ro.write_text(GAUDI_LOOP)
    os.chmod(ro, 0o444)
    good = tmp_path / "good.py"
    good.write_text(GAUDI_LOOP)
    code, out, err = run(["--fix", "broken.py", "ro.py", "good.py"], tmp_path, capsys, monkeypatch)
    assert code == 2
    assert "broken.py:2:" in err and "syntax error" in err
    assert "ro.py: error: read-only file: not fixed" in err
    assert broken.read_text() == "for x in y:\n    loss.backward(\n"
    assert ro.read_text() == GAUDI_LOOP
    assert good.read_text() == CASES["hpu004 gaudi: after backward and after step"][2]
    assert "ro.py:6:5: HPU004" in out  # still reported as remaining


def test_a_file_that_changes_during_the_fix_is_not_overwritten(tmp_path, capsys, monkeypatch):
    import hpulint.fix as fixmod

    p = tmp_path / "t.py"
    p.write_text(GAUDI_LOOP)
    real = fixmod.fix_source

    def edit_meanwhile(*a, **k):
        out = real(*a, **k)
        p.write_text(GAUDI_LOOP + "\n# edited by the user meanwhile\n")
        return out

    monkeypatch.setattr(fixmod, "fix_source", edit_meanwhile)
    code, _, err = run(["--fix", "t.py"], tmp_path, capsys, monkeypatch)
    assert code == 2 and "changed while hpulint was fixing it" in err
    assert p.read_text().endswith("# edited by the user meanwhile\n")


def test_a_fix_that_would_not_parse_is_left_out(tmp_path, capsys, monkeypatch):
    import hpulint.fix as fixmod

    p = tmp_path / "t.py"
    p.write_text(GAUDI_LOOP)
    monkeypatch.setattr(fixmod, "_apply", lambda module, findings: module.code + "\ndef (:\n")
    code, _, err = run(["--fix", "t.py"], tmp_path, capsys, monkeypatch)
    assert code == 2 and "produced code that does not parse" in err
    assert p.read_text() == GAUDI_LOOP
    assert not [f for f in tmp_path.iterdir() if f.name.endswith(".hpulint")]  # no temp file left


def test_overlapping_fixes_are_applied_over_more_passes():
    src = dedent("""
        import torch


        def sample(model, x, num_steps):
            steps = torch.linspace(1, 0, num_steps + 1, device=x.device)
            outs = torch.zeros(0, 4, device=x.device)
            for i in range(num_steps):
                x = model(x, steps[i])
                outs = torch.cat((outs, x))
            return outs
    """)
    out = fix_source(src, "t.py", Config(), unsafe=True)
    assert sorted(f.code for f in out.applied) == ["HPU001", "HPU003"]  # both loop rewrites
    assert out.fixed == dedent("""
        import torch


        def sample(model, x, num_steps):
            steps = torch.linspace(1, 0, num_steps + 1, device=x.device)
            outs = torch.zeros(0, 4, device=x.device)
            outs_parts = [outs]
            for i in range(num_steps):
                x = model(x, steps[0])
                outs_parts.append(x)
                steps = torch.roll(steps, shifts=-1, dims=0)
            outs = torch.cat(outs_parts)
            return outs
    """)
