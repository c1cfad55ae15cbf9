"""``hpulint verify NB.ipynb``: run the code cells in order, report lines as cell and line.

The cells run as one module, ``__main__``, compiled from the joined source under the
notebook's own path, so the verifier's frames, tracebacks and findings all use joined-source
lines; the report is then relabelled (``line 12`` -> ``cell 3, line 2``).
"""
from __future__ import annotations

import builtins
import json
import os
import re
import sys
import types

_LINE = re.compile(r'(File "([^"]+)", )?\bline (\d+)')


def run(path) -> dict:
    from hpulint.notebook import Notebook

    path = str(path)
    code = compile(Notebook.load(path).python, path, "exec")
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = builtins
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved
    return main.__dict__


def _same(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def relabel_text(nb, text: str, script: str) -> str:
    def sub(m):
        if m.group(2) is not None and not _same(m.group(2), script):
            return m.group(0)
        cell, line = nb.where(int(m.group(3)))
        if cell is None:
            return m.group(0)
        return f"{m.group(1) or ''}cell {cell}, line {line}"

    return _LINE.sub(sub, text)


def relabel_json(nb, text: str, script: str) -> str:
    data = json.loads(text)

    def walk(obj):
        if isinstance(obj, dict):
            f = obj.get("file")
            ours = f is None or (isinstance(f, str) and _same(f, script))
            if ours and isinstance(obj.get("line"), int) and not isinstance(obj.get("line"), bool):
                cell, line = nb.where(obj["line"])
                if cell is not None:
                    obj["cell"], obj["line"] = cell, line
            if ours and isinstance(obj.get("lines"), list) and all(isinstance(x, int) for x in obj["lines"]):
                obj["lines"] = [{"cell": c, "line": ln} for c, ln in map(nb.where, obj["lines"])]
            for v in obj.values():
                walk(v)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)

    walk(data)
    if isinstance(data, dict) and isinstance(data.get("error"), dict) and data["error"].get("traceback"):
        data["error"]["traceback"] = relabel_text(nb, data["error"]["traceback"], script)
    return json.dumps(data, indent=2) + "\n"
