"""The flake8 plugin: ``flake8 --select HPU`` runs hpulint's rules inside flake8.

flake8 hands over the file's lines; we join them and run the same engine (one libcst parse,
same rules, same analysis). flake8 does the selection (``--select``, ``--extend-ignore``,
``per-file-ignores``) and ``# noqa``; ``[tool.hpulint]`` still supplies the target and the extra
step markers. Columns are flake8's: 0-based here, shown 1-based by flake8, so both tools print
the same line:column. The plugin never imports torch and never raises into flake8.
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
    return Config(select=["ALL"], target=cfg.target, step_markers=cfg.step_markers, source=cfg.source)


class Plugin:
    name = "hpulint"
    version = __version__

    def __init__(self, tree, lines: list, filename: str = "stdin") -> None:  # tree: flake8 needs it to classify us
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[tuple]:
        from hpulint.engine import check_source

        folder = str(Path(self.filename).resolve().parent) if self.filename not in ("stdin", "-") else "."
        try:
            cfg = _config_for(folder)
            result = check_source("".join(self.lines), self.filename, cfg)
        except Exception as exc:  # pragma: no cover - a bug of ours must not stop flake8
            print(f"hpulint: internal error on {self.filename}: {exc}", file=sys.stderr)
            return
        for f in result.findings:
            yield f.line, f.col - 1, f"{f.code} {f.message}", type(self)
