"""``[tool.hpulint]`` in pyproject.toml: discovery, validation, and rule selection."""
from __future__ import annotations

import fnmatch
import functools
import re
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Optional

from hpulint.model import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

TARGETS = ("auto", "hpu", "xla", "compile")
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", ".env", "env", "__pycache__",
    "build", "dist", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".hpulint_cache", "site-packages", "*.egg-info",
)
DEFAULT_INCLUDE = ("*.py", "*.pyi", "*.ipynb")
# Rules that no source and no run of a real engine show costing a recompile on any target: they
# report only when selected by their exact code (HPU011: rules/HPU011.md, "Evidence").
OFF_BY_DEFAULT = ("HPU011",)


@dataclass
class Config:
    select: list = field(default_factory=lambda: ["HPU"])
    extend_select: list = field(default_factory=list)
    ignore: list = field(default_factory=list)
    per_file_ignores: dict = field(default_factory=dict)
    exclude: list = field(default_factory=list)
    include: list = field(default_factory=lambda: list(DEFAULT_INCLUDE))
    extend_include: list = field(default_factory=list)
    target: str = "auto"
    step_markers: list = field(default_factory=list)
    fixable: list = field(default_factory=lambda: ["HPU"])
    unfixable: list = field(default_factory=list)
    unsafe_fixes: bool = False
    # test code (test_*.py, *_test.py, conftest.py, files under test/ or tests/) is neither
    # checked nor indexed unless this is on: its reads and loops are assertions, not steps
    lint_tests: bool = False
    # where the table came from (None: defaults); globs are relative to its folder
    source: Optional[Path] = None

    @property
    def root(self) -> Path:
        return self.source.parent if self.source else Path.cwd()

    # --- selection ---------------------------------------------------------------------------

    def enabled(self, code: str, path: Optional[str] = None) -> bool:
        """Is ``code`` on for ``path``? The most specific prefix wins; a tie goes to ignore.
        A rule in ``OFF_BY_DEFAULT`` is on only when selected by its exact code."""
        if code in OFF_BY_DEFAULT and not self.explicit(code):
            return False
        sel = _best(code, [*self.select, *self.extend_select])
        ign = _best(code, [*self.ignore, *self._file_ignores(path)])
        return sel > ign

    def explicit(self, code: str) -> bool:
        """Selected by its exact code (turns on rules that are off by default for a target)."""
        return code in self.select or code in self.extend_select

    def fixable_code(self, code: str) -> bool:
        return _best(code, self.fixable) > _best(code, self.unfixable)

    def _file_ignores(self, path: Optional[str]) -> list:
        if not path or not self.per_file_ignores:
            return []
        rel = _relative(Path(path), self.root)
        out = []
        for pattern, codes in self.per_file_ignores.items():
            if _glob_match(rel, pattern):
                out.extend(codes)
        return out

    def is_excluded(self, path: Path) -> bool:
        rel = _relative(path, self.root)
        return any(_glob_match(rel, pattern) for pattern in self.exclude)

    def is_test(self, path: Path) -> bool:
        """Test code: a test module's name, or a folder named test or tests under the root. A
        ``*_test.py`` that holds no test (no `def test...`, no `class Test...`, no pytest or
        unittest import) is a script named for what it tries out (`distributed_test.py`, a
        training run), not test code."""
        name = path.name
        if name.endswith(".py") and (name.startswith("test_") or name in ("conftest.py", "tests.py")):
            return True
        if name.endswith(".py") and name[:-3].endswith(("_test", "_tests")) and _holds_tests(path):
            return True
        rel = _relative(path, self.root)
        parts = rel.split("/")[:-1]
        folders = _resolved(path).parents  # folders[0] is parts[-1]
        return any(part in ("test", "tests") and is_test_folder(folders[len(parts) - 1 - i])
                   for i, part in enumerate(parts))

    def is_included(self, path: Path) -> bool:
        """Is a file found in a folder one to check (``include`` and ``extend-include``)?"""
        rel = _relative(path, self.root)
        return any(_glob_match(rel, pattern) for pattern in [*self.include, *self.extend_include])

    def fingerprint(self) -> str:
        parts = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.name != "source"]
        return ";".join(parts)

    def summary_fingerprint(self) -> str:
        """What a file's summary depends on (not the rule selection)."""
        return f"target={self.target!r};step_markers={self.step_markers!r}"


_TEST_TEXT = re.compile(r"^\s*(?:def test|class Test|import (?:pytest|unittest)|from (?:pytest|unittest)\b)", re.M)


@functools.lru_cache(maxsize=1024)
def is_test_folder(folder: Path) -> bool:
    """A folder named test or tests holds test code unless none of its files (at any depth) holds
    a test or imports a test framework: then it holds scripts (`test/on_chip.py`, the entry
    points of a research repository's runs). Read until the first test is found."""
    try:
        for p in sorted(folder.rglob("*.py")):
            if _holds_tests(p):
                return True
    except OSError:
        return True
    return False


def _holds_tests(path: Path) -> bool:
    """Does the file define a test or import a test framework? (Unreadable: taken as a test.)"""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return _TEST_TEXT.search(fh.read(200_000)) is not None
    except OSError:
        return True


def _best(code: str, prefixes: list) -> int:
    """Length of the longest prefix in ``prefixes`` matching ``code`` ('ALL' matches all); -1: none."""
    best = -1
    for p in prefixes:
        if p == "ALL":
            best = max(best, 0)
        elif code.startswith(p):
            best = max(best, len(p))
    return best


def _relative(path: Path, root: Path) -> str:
    try:
        return _resolved(path).relative_to(_resolved(root)).as_posix()
    except ValueError:
        return path.as_posix()


def _resolved(path: Path) -> Path:
    """``path.resolve()``, once per path: discovery asks for each file's path relative to the
    root three times (include, exclude, test), and a resolve is a system call per component."""
    return _resolve(path if path.is_absolute() else Path.cwd() / path)


@functools.lru_cache(maxsize=16384)
def _resolve(path: Path) -> Path:
    return path.resolve()


def _glob_match(rel: str, pattern: str) -> bool:
    """A gitignore-like match: a pattern without '/' matches any path component or the name."""
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, pattern + "/*"):
        return True
    if "/" not in pattern:
        return any(fnmatch.fnmatchcase(part, pattern) for part in rel.split("/"))
    return fnmatch.fnmatchcase(rel, "*/" + pattern) or fnmatch.fnmatchcase(rel, "*/" + pattern + "/*")


# --- reading -------------------------------------------------------------------------------------

_KEYS = {
    "select": list, "extend-select": list, "ignore": list, "per-file-ignores": dict,
    "exclude": list, "include": list, "extend-include": list, "target": str, "step-markers": list, "fixable": list, "unfixable": list,
    "unsafe-fixes": bool, "lint-tests": bool,
}


def find_pyproject(start: Path) -> Optional[Path]:
    """The closest pyproject.toml at or above ``start`` that has a [tool.hpulint] table."""
    start = start.resolve()
    if start.is_file():
        start = start.parent
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = _read_toml(candidate)
            except ConfigError:
                raise
            if "hpulint" in data.get("tool", {}):
                return candidate
    return None


def _read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def load_config(path: Optional[Path]) -> Config:
    if path is None:
        return Config()
    table = _read_toml(path).get("tool", {}).get("hpulint", {})
    return config_from_table(table, path)


def config_from_table(table: dict, source: Optional[Path] = None) -> Config:
    where = f"{source}: [tool.hpulint]" if source else "[tool.hpulint]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    cfg = Config(source=source)
    from hpulint.rules import RULES_BY_CODE

    for key, value in table.items():
        kind = _KEYS.get(key)
        if kind is None:
            known = ", ".join(sorted(_KEYS))
            raise ConfigError(f"{where}: unknown key {key!r} (known keys: {known})")
        if not isinstance(value, kind):
            raise ConfigError(f"{where}: {key} must be a {kind.__name__}, not {type(value).__name__}")
        if kind is list and not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: {key} must be a list of strings")
        attr = key.replace("-", "_")
        if key in ("select", "extend-select", "ignore", "fixable", "unfixable"):
            _check_codes(value, f"{where}: {key}", RULES_BY_CODE)
        elif key == "per-file-ignores":
            for pattern, codes in value.items():
                if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                    raise ConfigError(f"{where}: per-file-ignores[{pattern!r}] must be a list of codes")
                _check_codes(codes, f"{where}: per-file-ignores[{pattern!r}]", RULES_BY_CODE)
        elif key == "target" and value not in TARGETS:
            raise ConfigError(f"{where}: target must be one of {', '.join(TARGETS)}, not {value!r}")
        setattr(cfg, attr, value)
    return cfg


def _check_codes(codes: list, where: str, rules: dict) -> None:
    for code in codes:
        if code == "ALL":
            continue
        if not any(c.startswith(code) for c in rules):
            raise ConfigError(f"{where}: {code!r} matches no rule (rules: {', '.join(rules)})")


def check_codes(codes: list, where: str) -> None:
    from hpulint.rules import RULES_BY_CODE

    _check_codes(codes, where, RULES_BY_CODE)
