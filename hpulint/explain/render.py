"""``hpulint explain`` output: text (default), json, sarif, github."""
from __future__ import annotations

import json
import os

FORMATS = ("text", "json", "sarif", "github")


def _show(path) -> str:
    if not path:
        return ""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def _texts(e) -> str:
    if e.count > 1 and e.last_text and e.last_text != e.text:
        return f"{e.text} ... {e.last_text.replace('guard failed: ', '')}"
    return e.text


def _what(e) -> str:
    count = f"{e.count} x " if e.count > 1 else ""
    of = f" of {e.function}" if e.function else ""
    return f"{count}{e.kind}{of}: {_texts(e)}"


def as_dict(e) -> dict:
    from hpulint.rules import RULES_BY_CODE

    rule = RULES_BY_CODE.get(e.rule) if e.rule else None
    return {
        "log": _show(e.log), "log_line": e.log_line, "engine": e.engine, "kind": e.kind, "count": e.count,
        "text": _texts(e), "function": e.function or None,
        "path": _show(e.file) or None, "line": e.line, "source": e.source or None,
        "frames": [{"path": f.file, "line": f.line, "function": f.function} for f in e.frames],
        "rule": e.rule, "name": rule.name if rule else None, "why": e.why or None, "fix": e.fix or None,
        "coverage": e.coverage or None, "coverage_note": e.coverage_note or None,
        "static": [{"code": c, "line": ln, "col": col} for c, ln, col in e.static],
    }


def render(fmt: str, reports: list) -> str:
    events = [e for r in reports for e in r.events]
    if fmt == "json":
        return json.dumps([as_dict(e) for e in events], indent=2) + "\n"
    if fmt == "github":
        return "".join(_github(e) + "\n" for e in events)
    if fmt == "sarif":
        return json.dumps(_sarif(events), indent=2) + "\n"
    return _text(reports)


def _text(reports: list) -> str:
    out = []
    for r in reports:
        kinds = ", ".join(r.formats) or "no known format"
        n = len(r.events)
        head = f"{_show(r.path)} ({kinds}): "
        if not n:
            notes = "; ".join(r.notes)
            out.append(head + "no events" + (f" ({notes})" if notes else ""))
            continue
        out.append(head + f"{n} event{'s' * (n != 1)}" + (f" ({'; '.join(r.notes)})" if r.notes else ""))
        for e in r.events:
            where = f"{_show(e.file)}:{e.line}" if e.file else (
                f"{e.site.file}:{e.site.line}" if e.site else f"{_show(e.log)}:{e.log_line}")
            rule = e.rule or "no rule"
            out.append(f"  {where}: {rule} {_what(e)}")
            if e.source:
                out.append(f"      | {e.source}")
            if e.why:
                out.append(f"    why: {e.why}")
            if e.fix:
                out.append(f"    fix: {e.fix}")
            if e.coverage:
                out.append(f"    static: {e.coverage}: {e.coverage_note}")
            out.append(f"    log: {_show(e.log)}:{e.log_line}")
    events = [e for r in reports for e in r.events]
    if events:
        ruled = sum(1 for e in events if e.rule)
        covered = sum(1 for e in events if e.coverage == "covered")
        missed = sum(1 for e in events if e.coverage == "not covered" and e.rule)
        out.append(f"Found {len(events)} event{'s' * (len(events) != 1)} in {len(reports)} "
                   f"log{'s' * (len(reports) != 1)}: {ruled} explained by a rule, {covered} covered by a "
                   f"static finding, {missed} with a rule that `hpulint check` did not report there.")
    elif reports:
        out.append("No events: nothing recompiled, broke the graph or read the device in these logs.")
    return "\n".join(out) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _message(e) -> str:
    parts = [_what(e)]
    if e.why:
        parts.append(f"why: {e.why}")
    if e.fix:
        parts.append(f"fix: {e.fix}")
    if e.coverage:
        parts.append(f"static: {e.coverage}: {e.coverage_note}")
    parts.append(f"log: {_show(e.log)}:{e.log_line}")
    return ". ".join(parts)


def _github(e) -> str:
    path, line = (_show(e.file), e.line) if e.file else (_show(e.log), e.log_line)
    title = f"hpulint explain: {e.rule or e.engine} {e.kind}"
    return f"::warning file={_escape_prop(path)},line={line},title={_escape_prop(title)}::{_escape_data(_message(e))}"


def _sarif(events: list) -> dict:
    from hpulint import __version__
    from hpulint.project import rule_page_url, PROJECT_URL
    from hpulint.rules import ALL_RULES

    rules = [{"id": r.code, "name": r.name, "shortDescription": {"text": r.summary},
              "helpUri": rule_page_url(r.code), "defaultConfiguration": {"level": "warning"}}
             for r in ALL_RULES]
    rules.append({"id": "log-event", "name": "log-event",
                  "shortDescription": {"text": "an event in an engine's log that no hpulint rule explains"},
                  "defaultConfiguration": {"level": "note"}})
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for e in events:
        rule_id = e.rule or "log-event"
        path, line = (e.file, e.line) if e.file else (e.log, e.log_line)
        results.append({
            "ruleId": rule_id, "ruleIndex": index[rule_id], "level": "warning" if e.rule else "note",
            "message": {"text": _message(e)},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _show(path).replace("\\", "/")},
                                                "region": {"startLine": line}}}],
            "properties": {"engine": e.engine, "kind": e.kind, "count": e.count, "coverage": e.coverage,
                           "log": _show(e.log).replace("\\", "/"), "logLine": e.log_line},
        })
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "hpulint explain", "version": __version__,
                                      "informationUri": PROJECT_URL, "rules": rules}},
                  "results": results}],
    }
