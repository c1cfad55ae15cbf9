"""A content-hash cache: a re-run on unchanged files does no parsing.

Two kinds of entries, both keyed by hpulint's version, the effective configuration, the file's
path and its bytes:

- a file's *summary* (what the project link step needs from it);
- a file's *result*: its findings and errors, with the project facts it asked for and the
  answers it got. A later run reuses the result while those questions get the same answers
  from the newly linked project, whatever else changed.

The cache lives in ``.hpulint_cache/`` next to the configuration (or in the current folder);
``hpulint clean`` removes it.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Optional

from hpulint import __version__
from hpulint.model import FileError, Finding, Fix

CACHE_DIR = ".hpulint_cache"


def code_fingerprint() -> str:
    """A hash of hpulint's own source: a changed hpulint never reads an older one's entries."""
    global _CODE
    if _CODE is None:
        h = hashlib.blake2b(digest_size=8)
        package = Path(__file__).resolve().parent
        for f in sorted(package.rglob("*.py")):
            if "lazy" in f.relative_to(package).parts:
                continue  # the verifier does not shape lint results
            try:
                h.update(f.read_bytes())
            except OSError:
                pass
        _CODE = h.hexdigest()
    return _CODE


_CODE = None


class Cache:
    def __init__(self, root: Path, config_fingerprint: str, summary_fingerprint: str = "") -> None:
        self.dir = root / CACHE_DIR / __version__
        code = code_fingerprint()
        self.salt = f"{__version__}\0{code}\0{config_fingerprint}\0".encode()
        self.summary_salt = f"{__version__}\0{code}\0{summary_fingerprint}\0".encode()

    def key(self, path: str, data: bytes, kind: str = "result", extra: str = "") -> str:
        h = hashlib.blake2b(self.summary_salt if kind == "summary" else self.salt, digest_size=20)
        h.update(f"{kind}\0{extra}\0".encode())
        h.update(path.encode("utf-8", "surrogateescape") + b"\0")
        h.update(data)
        return h.hexdigest()

    def _read(self, key: str) -> Optional[dict]:
        try:
            with open(self.dir / key[:2] / key, encoding="utf-8") as fh:
                return json.load(fh)
        except (OSError, ValueError):
            return None

    def _write(self, key: str, entry: dict) -> None:
        folder = self.dir / key[:2]
        try:
            if not (self.dir.parent / "CACHEDIR.TAG").exists():
                self.dir.parent.mkdir(parents=True, exist_ok=True)
                (self.dir.parent / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
                (self.dir.parent / ".gitignore").write_text("*\n")
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(entry, fh)
            os.replace(tmp, folder / key)
        except OSError:
            pass  # a read-only tree just goes uncached

    # --- results -------------------------------------------------------------------------

    def get(self, key: str) -> Optional[tuple]:
        """(findings, errors, records) of a cached result."""
        entry = self._read(key)
        if entry is None or "findings" not in entry:
            return None
        findings = []
        for f in entry["findings"]:
            f = dict(f)
            fix = f.pop("fix", None)
            findings.append(Finding(**f, fix=Fix(*fix) if fix else None))
        errors = [FileError(**e) for e in entry["errors"]]
        return findings, errors, entry.get("records", [])

    def put(self, key: str, findings: list, errors: list, records: list = ()) -> None:
        self._write(key, {
            "findings": [
                {**{k: v for k, v in f.__dict__.items() if k not in ("node", "fix")},
                 "fix": [f.fix.applicability, f.fix.description] if f.fix else None}
                for f in findings
            ],
            "errors": [e.__dict__ for e in errors],
            "records": list(records),
        })

    # --- summaries -----------------------------------------------------------------------

    def get_summary(self, key: str) -> Optional[dict]:
        entry = self._read(key)
        return entry.get("summary") if entry is not None else None

    def put_summary(self, key: str, summary: dict) -> None:
        self._write(key, {"summary": summary})


def clean(root: Path) -> bool:
    target = root / CACHE_DIR
    if target.is_dir():
        shutil.rmtree(target)
        return True
    return False
