"""Which files make up the project a linted file belongs to, and what each one is called.

The project root is the folder of the ``pyproject.toml`` that holds ``[tool.hpulint]``, else the
nearest folder above the linted paths with a ``pyproject.toml``, ``setup.py``, ``setup.cfg``,
``requirements.txt`` (a model's folder in a repository of many models) or ``.git``, else the linted paths' common folder. The *index* is every Python file under the root
(the same discovery and excludes as linting) when there are at most :data:`INDEX_LIMIT` of
them; in a larger project, the linted files and, transitively, the project files they import.
Summaries are cached by content, so after the first run the whole index costs a read per file.

A file's module name is its path under the root (``pkg/utils.py`` -> ``pkg.utils``); whether
its folder is a package (has ``__init__.py``) decides how its imports resolve.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

INDEX_LIMIT = 2000
PLUGIN_INDEX_LIMIT = 300  # flake8 lints one file at a time: a smaller project is indexed whole
MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", ".git")
_IMPORT = re.compile(r"^\s*(?:from\s+(\.*[\w.]*)\s+import\s+([\w\s,().*]+)|import\s+([\w.,\s]+?))\s*(?:#.*)?$",
                     re.M)


@dataclass(frozen=True)
class FileInfo:
    path: Path
    module: str
    is_package: bool
    script: bool  # its folder is not a package: run as a script, its folder is on sys.path


def project_root(paths: Iterable, config=None) -> Path:
    resolved = [Path(p).resolve() for p in paths if str(p) != "-"]
    if config is not None and getattr(config, "source", None) is not None:
        return Path(config.source).resolve().parent
    if not resolved:
        return Path.cwd()
    common = Path(os.path.commonpath([str(p if p.is_dir() else p.parent) for p in resolved]))
    here: Optional[Path] = common
    home = Path.home()
    while here is not None:
        if is_project(here):
            return here
        if here == home or here.parent == here:
            break
        here = here.parent
    return common


def info_for(path: Path, root: Path) -> FileInfo:
    path = Path(path)
    absolute = path.resolve()
    try:
        rel = absolute.relative_to(root)
        parts = list(rel.with_suffix("").parts)
    except ValueError:
        parts = [absolute.stem]
    is_package = parts[-1] == "__init__" if parts else False
    if is_package:
        parts = parts[:-1]
    module = ".".join(p.replace("-", "_").replace(".", "_") for p in parts) or absolute.parent.name or "<root>"
    script = not (absolute.parent / "__init__.py").exists()
    return FileInfo(path, module, is_package, script)


def is_project(root: Path, config=None) -> bool:
    """Does ``root`` hold a project marker (or the configuration)? When it does not, it is only
    the linted paths' common folder (a loose script in ~/Downloads or /tmp), not a project."""
    if config is not None and getattr(config, "source", None) is not None:
        return True
    return any((Path(root) / m).exists() for m in MARKERS)


def index_for(lint_files: list, root: Path, discover, config, limit: int = INDEX_LIMIT,
              everything: Optional[list] = None, project: Optional[bool] = None) -> list:
    """The index (FileInfo of every file to summarise); the linted files come first. Without a
    project marker the index is the linted files, the files next to them and what they import
    (transitively): a loose script is not linked with whatever else its folder holds further down.
    ``everything``: what discovering the root gives, when the caller has it already;
    ``project``: whether the root is a project, when the caller knows better than its markers
    (a checkout extracted without the ``.git`` folder its clone has)."""
    resolved: dict = {}  # each path resolved once (a system call per path component)

    def real(f) -> Path:
        r = resolved.get(f)
        if r is None:
            r = resolved[f] = Path(f).resolve()
        return r

    infos = {}
    for f in lint_files:
        infos[real(f)] = info_for(Path(f), root)
    marked = is_project(root, config) if project is None else project
    if everything is None:
        # (without a marker, only the linted files' own folders: files in `/tmp/a` and `~/b`
        # have `/` for common folder, which is no project to walk)
        folders = sorted({str(real(f).parent) for f in lint_files}) if not marked else [str(root)]
        everything, _ = discover(folders or [str(root)], config)
    if not marked:
        folders = {real(f).parent for f in lint_files}
        for f in everything:
            if real(f).parent in folders and real(f) not in infos:
                infos[real(f)] = info_for(Path(f), root)
        limit = -1  # then only what they import
    if len(everything) <= limit:
        for f in everything:
            if real(f) not in infos:
                infos[real(f)] = info_for(Path(f), root)
        return list(infos.values())
    if all(real(f) in infos for f in everything):
        return list(infos.values())  # nothing left for their imports to add
    by_module = {}
    for f in everything:
        info = infos.get(real(f)) or info_for(Path(f), root)
        by_module.setdefault(info.module, info)
    todo = list(infos.values())
    while todo:  # the linted files (and a loose script's siblings), then what they import
        info = todo.pop()
        for mod in imported_modules(info):
            target = by_module.get(mod)
            if target is not None and real(target.path) not in infos:
                infos[real(target.path)] = target
                todo.append(target)
    return list(infos.values())


def imported_modules(info: FileInfo) -> set:
    """Module names a file imports, as project module names could spell them (read with a regex:
    cheap, and good enough to find the files worth summarising)."""
    try:
        text = info.path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    here = info.module.split(".")
    package = here if info.is_package else here[:-1]
    out = set()
    for m in _IMPORT.finditer(text):
        if m.group(1) is not None:
            base = m.group(1)
            dots = len(base) - len(base.lstrip("."))
            name = base.lstrip(".")
            if dots:
                up = package[: len(package) - (dots - 1)] if dots - 1 <= len(package) else []
                name = ".".join([*up, name] if name else up)
            names = [name] + [f"{name}.{n.strip()}" for n in m.group(2).replace("(", "").replace(")", "").split(",")
                              if n.strip() and n.strip() != "*"]
        else:
            names = [n.strip().split(" as ")[0] for n in m.group(3).split(",")]
        for name in names:
            parts = [p for p in name.split(".") if p]
            for k in range(len(parts), 0, -1):
                out.add(".".join(parts[:k]))
                for j in range(len(package), 0, -1):  # a script's sibling, a src/ layout
                    out.add(".".join(package[:j] + parts[:k]))
                out.add(".".join(["src", *parts[:k]]))  # a package under src/ (see Project._absolute)
    return out
