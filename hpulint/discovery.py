"""Which files a run checks: the paths given, walked for ``include`` minus ``exclude``.

A path that gives nothing to check is said so, with the reason (nothing matches ``include``,
everything is excluded, or only skipped folders hold files): never a silent all-clear.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from hpulint.config import DEFAULT_EXCLUDE, Config, is_test_folder


def discover(paths: list, cfg: Config, warnings: Optional[list] = None) -> tuple:
    """(files to check, errors) under ``paths``, skipping caches, VCS and virtual environments.

    A path that gives no file to check adds a sentence saying why to ``warnings``.
    """
    from hpulint.model import FileError

    is_test_folder.cache_clear()  # (what a folder holds may have changed since the last run)
    files, errors, seen = [], [], set()
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            if cfg.is_excluded(path):
                _warn(warnings, f"{raw}: not checked: excluded by exclude = {_patterns(cfg.exclude)}")
            elif not cfg.lint_tests and cfg.is_test(path):
                _warn(warnings, f"{raw}: not checked: test code (lint-tests = true in [tool.hpulint] checks it)")
            elif path not in seen:
                seen.add(path)
                files.append(path)
            continue
        if not path.is_dir():
            errors.append(FileError(raw, "no such file or directory"))
            continue
        found, excluded, tests, skipped = len(files), 0, 0, []
        for folder, dirs, names in os.walk(path):
            here = Path(folder)
            kept = []
            for d in sorted(dirs):
                if _default_excluded(d) or _is_venv(here / d) or cfg.is_excluded(here / d) \
                        or (not cfg.lint_tests and d in ("test", "tests") and is_test_folder(here / d)):
                    skipped.append(d)
                else:
                    kept.append(d)
            dirs[:] = kept
            for name in sorted(names):
                p = here / name
                if cfg.is_included(p):
                    if cfg.is_excluded(p):
                        excluded += 1
                    elif not cfg.lint_tests and cfg.is_test(p):
                        tests += 1
                    elif p not in seen:
                        seen.add(p)
                        files.append(p)
        if len(files) == found:
            why = _why_none(cfg, excluded, skipped)
            if tests:
                why += f"; {tests} test file{'s are' if tests != 1 else ' is'} not checked (lint-tests = true checks them)"
            _warn(warnings, f"{raw}: no file to check: " + why)
    return files, errors


def _patterns(patterns: list) -> str:
    return "[" + ", ".join(f'"{p}"' for p in patterns) + "]"


def _why_none(cfg: Config, excluded: int, skipped: list) -> str:
    kinds = _patterns([*cfg.include, *cfg.extend_include])
    if excluded:
        return (f"{'the' if excluded == 1 else f'all {excluded}'} file{'s' if excluded != 1 else ''} "
                f"matching include = {kinds} {'is' if excluded == 1 else 'are'} excluded by exclude = "
                f"{_patterns(cfg.exclude)}")
    why = f"no file in it matches include = {kinds}"
    if skipped:
        why += f" (folders skipped: {', '.join(sorted(set(skipped))[:5])})"
    return why


def _warn(warnings: Optional[list], text: str) -> None:
    if warnings is not None:
        warnings.append(text)


def _default_excluded(name: str) -> bool:
    import fnmatch

    return any(fnmatch.fnmatchcase(name, pattern) for pattern in DEFAULT_EXCLUDE)


def _is_venv(folder: Path) -> bool:
    """A virtual environment's folder (its `pyvenv.cfg`); a folder that cannot be read is not one
    (`/proc/1/fdinfo` when the linted paths share only `/`)."""
    try:
        return (folder / "pyvenv.cfg").exists()
    except OSError:
        return False
