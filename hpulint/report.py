"""Output formats for findings and errors."""
from __future__ import annotations

import json
from collections import Counter

FORMATS = ("text", "json")


def render(fmt: str, findings: list, errors: list, *, statistics: bool = False, quiet: bool = False,
           fixable_hint: bool = True) -> str:
    if fmt == "json":
        return json.dumps([f.as_dict() for f in findings], indent=2) + "\n"
    lines = []
    if statistics:
        counts = Counter((f.code, f.name) for f in findings)
        fixable = Counter(f.code for f in findings if f.fix is not None)
        for (code, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            mark = "[*]" if fixable[code] else "   "
            lines.append(f"{n:5d}  {code}  {mark} {name}")
    else:
        for f in findings:
            mark = " [*]" if f.fix is not None and f.fix.applicability == "safe" else ""
            lines.append(f"{f.path}:{f.line}:{f.col}: {f.code}{mark} {f.message}")
    if not quiet:
        if findings:
            n = len(findings)
            lines.append(f"Found {n} finding{'s' if n != 1 else ''}.")
            safe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "safe")
            unsafe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "unsafe")
            if fixable_hint and safe:
                lines.append(f"[*] {safe} fixable with the `--fix` option.")
            if fixable_hint and unsafe:
                lines.append(f"({unsafe} more fix{'es' if unsafe != 1 else ''} available with `--fix --unsafe-fixes`)")
        elif not errors:
            lines.append("All checks passed!")
    return "\n".join(lines) + ("\n" if lines else "")
