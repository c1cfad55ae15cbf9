"""Output formats for findings.

text (default), concise (one line per finding, no summary), json (a list), json-lines (one
object per line), github (workflow annotations), sarif (SARIF 2.1.0 for code scanning).
Errors (unreadable files, syntax errors, rule failures) always go to stderr as text.
"""
from __future__ import annotations

import json
from collections import Counter

from hpulint import __version__
from hpulint.project import PROJECT_URL, rule_page_url

FORMATS = ("text", "concise", "json", "json-lines", "github", "sarif")


def render(fmt: str, findings: list, errors: list, *, statistics: bool = False, quiet: bool = False,
           fixable_hint: bool = True, fix_changes: dict | None = None, files: int | None = None) -> str:
    """``files``: how many files were checked, for the text summary (None: not said)."""
    if fmt == "json":
        return json.dumps([f.as_dict() for f in findings], indent=2) + "\n"
    if fmt == "json-lines":
        return "".join(json.dumps(f.as_dict()) + "\n" for f in findings)
    if fmt == "github":
        return "".join(_github(f) + "\n" for f in findings)
    if fmt == "sarif":
        return json.dumps(sarif(findings, fix_changes), indent=2) + "\n"
    if fmt == "concise":
        return "".join(f"{f.where}: {f.code} {f.message}\n" for f in findings)
    return _text(findings, errors, statistics, quiet, fixable_hint, files)


def files_checked(n: int | None) -> str:
    return "" if n is None else f"{n} file{'s' if n != 1 else ''} checked"


def _text(findings, errors, statistics, quiet, fixable_hint, files=None) -> str:
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
            lines.append(f"{f.where}: {f.code}{mark} {f.message}")
    if not quiet:
        if findings:
            n = len(findings)
            checked = f" ({files_checked(files)})" if files is not None else ""
            lines.append(f"Found {n} finding{'s' if n != 1 else ''}{checked}.")
            safe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "safe")
            unsafe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "unsafe")
            if fixable_hint and safe:
                lines.append(f"[*] {safe} fixable with the `--fix` option.")
            if fixable_hint and unsafe:
                lines.append(f"({unsafe} more fix{'es' if unsafe != 1 else ''} available with `--fix --unsafe-fixes`)")
        elif files == 0:
            lines.append("No files checked.")
        elif not errors:
            lines.append("All checks passed!" + (f" ({files_checked(files)})" if files is not None else ""))
    return "\n".join(lines) + ("\n" if lines else "")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(f) -> str:
    # in a notebook, line and col are in the cell (as ruff does): the title and text name it
    cell = f" (cell {f.cell})" if f.cell is not None else ""
    props = (f"file={_escape_prop(f.path)},line={f.line},col={f.col},endLine={f.end_line},"
             f"endColumn={f.end_col},title={_escape_prop(f.code + ' ' + f.name + cell)}")
    text = f"{f.code} {f.message}" if f.cell is None else f"{f.code} cell {f.cell}, line {f.line}: {f.message}"
    return f"::warning {props}::{_escape_data(text)}"


def sarif(findings: list, fix_changes: dict | None = None) -> dict:
    """SARIF 2.1.0. ``fix_changes`` maps id(finding) to its SARIF replacements (see fix.py)."""
    from hpulint.rules import ALL_RULES

    rules = [
        {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "helpUri": rule_page_url(r.code),
            "defaultConfiguration": {"level": "warning"},
        }
        for r in ALL_RULES
    ]
    index = {r.code: i for i, r in enumerate(ALL_RULES)}
    results = []
    for f in findings:
        result = {
            "ruleId": f.code,
            "ruleIndex": index.get(f.code, 0),
            "level": "warning",
            "message": {"text": f.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": f.path.replace("\\", "/")},
                    "region": {"startLine": f.line, "startColumn": f.col,
                               "endLine": f.end_line, "endColumn": f.end_col},
                }
            }],
        }
        if f.cell is not None:  # region lines and columns are in this cell of the notebook
            result["properties"] = {"cell": f.cell}
        if f.fix is not None:
            result.setdefault("properties", {})["fixApplicability"] = f.fix.applicability
            changes = (fix_changes or {}).get(id(f))
            if changes:  # SARIF requires the edits themselves; without them, no fix object
                result["fixes"] = [{
                    "description": {"text": f"{f.fix.description} ({f.fix.applicability})"},
                    "artifactChanges": [{
                        "artifactLocation": {"uri": f.path.replace("\\", "/")},
                        "replacements": changes,
                    }],
                }]
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "hpulint", "version": __version__,
                                "informationUri": PROJECT_URL, "rules": rules}},
            "results": results,
        }],
    }
