"""The pre-commit hooks, for real: `pre-commit run` in a throwaway repo whose config names this checkout.

It installs hpulint from this checkout into pre-commit's own environment (once per run), so it needs the
package registry: marked `network` (deselect with -m "not network" offline).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from snippets import HAZARD, GAUDI_LOOP

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.network, pytest.mark.slow]



@pytest.fixture(scope="session")
def env(tmp_path_factory):
    """git and pre-commit, a snapshot of this checkout as a hook repository pinned at one commit
    (what a user's `.pre-commit-config.yaml` names), and one pre-commit home shared by every test
    and every xdist worker: pre-commit installs the hook environment once and reuses it, as it
    does for a user (`try-repo` would reinstall it on every call)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    try:
        import pre_commit  # noqa: F401
        from filelock import FileLock  # pre-commit's own dependency (through virtualenv)
    except ImportError:
        pytest.skip("pre-commit is not installed")
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, common to the workers
    e = dict(os.environ, PRE_COMMIT_HOME=str(shared / "pre-commit-home"), GIT_AUTHOR_NAME="t",
             GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    source = shared / "hpulint-hook-repo"
    with FileLock(str(shared / "hpulint-hook-repo.lock")):
        if not (source / ".git").is_dir():
            _snapshot(source, e)
    e["HPULINT_HOOK_REPO"] = str(source)
    e["HPULINT_HOOK_REV"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=source, env=e, check=True,
                                           capture_output=True, text=True).stdout.strip()
    return e


def _snapshot(dest: Path, env: dict) -> None:
    """This checkout as it is on disk (uncommitted edits included, ignored files left out),
    committed in a repository of its own."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "snapshot"]):
        subprocess.run(cmd, cwd=dest, check=True, env=env)


def try_repo(repo: Path, env: dict, hook: str = "hpulint") -> subprocess.CompletedProcess:
    """`pre-commit run HOOK --all-files` in ``repo``, whose config uses this checkout's hooks."""
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {env['HPULINT_HOOK_REPO']}\n  rev: {env['HPULINT_HOOK_REV']}\n"
        "  hooks:\n  - id: hpulint\n  - id: hpulint-fix\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", hook, "--all-files", "--verbose"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=600,
    )


def test_hook_passes_on_clean_code_and_fails_on_a_hazard(tmp_path, env):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
    (repo / "ok.py").write_text("import torch\n\nx = torch.zeros(3)\n")
    clean = try_repo(repo, env)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "hpulint" in clean.stdout and "Passed" in clean.stdout

    (repo / "train.py").write_text(HAZARD)
    dirty = try_repo(repo, env)
    assert dirty.returncode == 1, dirty.stdout + dirty.stderr
    assert "Failed" in dirty.stdout
    assert "train.py:9:15: HPU005" in dirty.stdout


def test_hooks_take_notebooks(tmp_path, env):
    import json

    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": GAUDI_LOOP.splitlines(True)}
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (repo / "train.ipynb").write_text(json.dumps(nb, indent=1) + "\n")
    dirty = try_repo(repo, env)
    assert dirty.returncode == 1, dirty.stdout + dirty.stderr
    assert "train.ipynb:cell 1:6:5: HPU004" in dirty.stdout
    proc = try_repo(repo, env, "hpulint-fix")
    assert "files were modified by this hook" in proc.stdout
    source = json.loads((repo / "train.ipynb").read_text())["cells"][0]["source"]
    assert source.count("        htcore.mark_step()\n") == 2




def test_fix_hook_applies_the_safe_fix(tmp_path, env):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
    (repo / "train.py").write_text(GAUDI_LOOP)
    proc = try_repo(repo, env, "hpulint-fix")
    # pre-commit fails a hook that modified files, and the file now has both markers
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "files were modified by this hook" in proc.stdout
    fixed = (repo / "train.py").read_text()
    assert fixed.count("htcore.mark_step()") == 2
    again = try_repo(repo, env, "hpulint-fix")
    assert again.returncode == 0, again.stdout + again.stderr


def test_manifest_declares_the_three_hooks():
    import yaml

    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert sorted(hooks) == ["hpulint", "hpulint-fix", "hpulint-verify"]
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["require_serial"] is True
        assert hook["minimum_pre_commit_version"]
    assert hooks["hpulint"]["types_or"] == ["python", "pyi", "jupyter"] == hooks["hpulint-fix"]["types_or"]
    assert "--fix" in hooks["hpulint-fix"]["entry"]
    assert hooks["hpulint-verify"]["stages"] == ["manual"]
