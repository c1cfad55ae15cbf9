"""A content-hash cache of lint results: a re-run on unchanged files does no parsing.

The key is the file's bytes, its path, hpulint's version and the effective configuration; an
entry holds the findings and errors as JSON. The cache lives in ``.hpulint_cache/`` next to the
configuration (or in the current folder); ``hpulint clean`` removes it.
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


class Cache:
    def __init__(self, root: Path, config_fingerprint: str) -> None:
        self.dir = root / CACHE_DIR / __version__
        self.salt = f"{__version__}\0{config_fingerprint}\0".encode()

    def key(self, path: str, data: bytes) -> str:
        h = hashlib.blake2b(self.salt, digest_size=20)
        h.update(path.encode("utf-8", "surrogateescape") + b"\0")
        h.update(data)
        return h.hexdigest()

    def get(self, key: str) -> Optional[tuple]:
        try:
            with open(self.dir / key[:2] / key, encoding="utf-8") as fh:
                entry = json.load(fh)
        except (OSError, ValueError):
            return None
        findings = []
        for f in entry["findings"]:
            fix = f.pop("fix", None)
            findings.append(Finding(**f, fix=Fix(*fix) if fix else None))
        errors = [FileError(**e) for e in entry["errors"]]
        return findings, errors

    def put(self, key: str, findings: list, errors: list) -> None:
        entry = {
            "findings": [
                {**{k: v for k, v in f.__dict__.items() if k not in ("node", "fix")},
                 "fix": [f.fix.applicability, f.fix.description] if f.fix else None}
                for f in findings
            ],
            "errors": [e.__dict__ for e in errors],
        }
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


def clean(root: Path) -> bool:
    target = root / CACHE_DIR
    if target.is_dir():
        shutil.rmtree(target)
        return True
    return False
