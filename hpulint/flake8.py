"""The flake8 plugin: ``flake8 --select HPU`` runs hpulint's rules inside flake8.

flake8 hands over the file's lines; we lint them with the same engine (one libcst parse, same
rules, same analysis) as part of the file's project, like ``hpulint FILE``: the project is
indexed (summaries read from ``.hpulint_cache/`` when they are there, else made and cached),
whole when it has at most 300 Python files, else the file and the project files it imports
(then facts that come from a caller in another file, such as a helper being hot because a step
loop elsewhere calls it, are not known here). flake8 does the selection (``--select``,
``--extend-ignore``, ``per-file-ignores``) and ``# noqa``; ``[tool.hpulint]`` still supplies the
target and the extra step markers. Columns are flake8's: 0-based here, shown 1-based by flake8,
so both tools print the same line:column. The plugin never imports torch and never raises into
flake8.
"""
from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from hpulint import __version__


@lru_cache(maxsize=64)
def _config_for(folder: str):
    from hpulint.config import Config, find_pyproject, load_config

    try:
        cfg = load_config(find_pyproject(Path(folder)))
    except Exception as exc:  # a bad config must not break flake8
        print(f"hpulint: {exc}", file=sys.stderr)
        cfg = Config()
    # flake8 selects and ignores; every rule runs here
    return Config(select=["ALL"], target=cfg.target, step_markers=cfg.step_markers, source=cfg.source,
                  exclude=cfg.exclude)


def _project(filename: str, folder: str):
    """(linked facts, FileInfo by path) of the project ``filename`` belongs to. Made once per
    project and configuration in a flake8 process (flake8 asks file by file, folder by folder)."""
    from hpulint.cli import discover
    from hpulint.index import PLUGIN_INDEX_LIMIT, project_root

    cfg = _config_for(folder)
    root = project_root([filename], cfg)
    key = (str(root), str(cfg.source))
    size = _SIZES.get(key)
    if size is None:
        size = _SIZES[key] = len(discover([str(root)], cfg)[0])
    target = None if size <= PLUGIN_INDEX_LIMIT else filename
    found = _LINKED.get((key, target))
    if found is None:
        if len(_LINKED) >= 8:
            _LINKED.pop(next(iter(_LINKED)))
        found = _LINKED[(key, target)] = _linked(root, cfg, target)
    return found


_SIZES: dict = {}  # (project root, pyproject) -> Python files the project has
_LINKED: dict = {}  # ((project root, pyproject), file or None for the whole project) -> _linked()


def _linked(root: Path, cfg, filename):
    """The whole project's facts (``filename`` None), or those of a file and what it imports."""
    from hpulint.cache import Cache
    from hpulint.cli import discover
    from hpulint.index import index_for
    from hpulint.runner import link_only

    infos = index_for([filename] if filename else [], root, discover, cfg,
                      limit=10**9 if filename is None else 0)
    cache = Cache(root if cfg.source is None else cfg.source.parent, cfg.fingerprint(),
                  cfg.summary_fingerprint())
    return link_only(infos, cfg, cache), {str(Path(i.path).resolve()): i for i in infos}


class Plugin:
    name = "hpulint"
    version = __version__

    def __init__(self, tree, lines: list, filename: str = "stdin") -> None:  # tree: flake8 needs it to classify us
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[tuple]:
        from hpulint.engine import check_source

        alone = self.filename in ("stdin", "-")
        folder = str(Path(self.filename).resolve().parent) if not alone else "."
        try:
            cfg = _config_for(folder)
            if not alone and not cfg.lint_tests and cfg.is_test(Path(self.filename).resolve()):
                return  # test code: its reads are assertions (lint-tests = true checks it)
            linked, module = None, None
            if not alone:
                linked, infos = _project(str(Path(self.filename).resolve()), folder)
                info = infos.get(str(Path(self.filename).resolve()))
                module = info.module if info is not None else None
            result = check_source("".join(self.lines), self.filename, cfg, linked=linked, module_name=module)
        except Exception as exc:  # pragma: no cover - a bug of ours must not stop flake8
            print(f"hpulint: internal error on {self.filename}: {exc}", file=sys.stderr)
            return
        for f in result.findings:
            yield f.line, f.col - 1, f"{f.code} {f.message}", type(self)
