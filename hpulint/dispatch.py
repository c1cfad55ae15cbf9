"""One walk of a file's tree for the analysis and every enabled rule, and the rules' reports.

The analysis handlers and every enabled rule's ``visit_<Node>``/``leave_<Node>`` methods are
batched into one dispatch table (per node type), so a rule adds a method call per matching node,
not a pass. The walk is iterative, over each node type's child fields (``syntax.child_fields``),
skipping whitespace and punctuation. A rule's report is kept with its deferred condition
(``FileContext.add``) until the project is linked; ``FileContext.evaluate`` then decides it.
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis import Analysis, analysis_handlers
from hpulint.analysis.syntax import child_fields
from hpulint.config import Config


class FileContext:
    def __init__(self, path: str, source: str, config: Config, analysis: Analysis) -> None:
        self.path = path
        self.source = source
        self.config = config
        self.analysis = analysis
        self.rules: list = []
        self.pending: list = []
        self.crashes: list = []
        self.failed: set = set()  # rules that raised: their later callbacks are skipped

    def release(self) -> None:
        for rule in self.rules:
            rule.__dict__.clear()
        self.analysis.release()
        self.__dict__.clear()

    def add(self, rule, node, message, fix, when) -> None:
        if rule.default_target and not self.config.explicit(rule.code):
            when = _only_for_target(self.analysis, self.analysis.function, rule.default_target, when)
        if rule.lazy_mode_only:
            when = _only_in_lazy_mode(self.analysis, self.analysis.function, when)
        self.pending.append((rule, node, message, fix, when, self.analysis.statement))

    def evaluate(self) -> list:
        out = []
        seen = set()
        for rule, node, message, fix, when, statement in self.pending:
            if rule in self.failed:
                continue
            if when is not None:
                try:
                    why = when()
                except Exception as exc:  # a rule's deferred condition failed: that rule only
                    self.failed.add(rule)
                    self.crashes.append((rule, node, exc))
                    continue
                if why is None:
                    continue
                message = message.replace("{why}", why)
            key = (rule.code, id(node))
            if key in seen:
                continue
            if callable(fix):  # a fix that needs the project's facts to decide
                try:
                    fix = fix()
                except Exception as exc:
                    self.failed.add(rule)
                    self.crashes.append((rule, node, exc))
                    continue
            seen.add(key)
            out.append((rule, node, message, fix, statement))
        return out


def _only_for_target(an: Analysis, fn, target: str, inner):
    """Wrap a deferred condition: report only when the code runs on ``target``."""

    def when():
        if an.target_of(fn) != target:
            return None
        return inner() if inner is not None else ""

    return when


def _only_in_lazy_mode(an: Analysis, fn, inner):
    """Wrap a deferred condition: report only where the code can run in lazy mode."""

    def when():
        if not an.lazy_mode(fn):
            return None
        return inner() if inner is not None else ""

    return when


# --- the walk --------------------------------------------------------------------------------


_HANDLERS: dict = {}  # rule class -> its (node type, method name, is a visit_) in name order


def _rule_handlers(cls) -> list:
    found = _HANDLERS.get(cls)
    if found is None:
        found = []
        for attr in dir(cls):
            if attr.startswith("visit_") or attr.startswith("leave_"):
                node_type = getattr(cst, attr[6:], None)
                if node_type is None:
                    raise TypeError(f"{cls.__name__}.{attr}: no libcst node {attr[6:]}")
                found.append((node_type, attr, attr.startswith("visit_")))
        _HANDLERS[cls] = found
    return found


def _dispatch_tables(ctx: FileContext) -> tuple:
    enter: dict = {}
    leave: dict = {}
    for rule in ctx.rules:
        for node_type, attr, is_visit in _rule_handlers(type(rule)):
            fn = getattr(rule, attr)
            if fn is None:
                continue  # the rule set it to None: not needed in this file
            table = enter if is_visit else leave
            table.setdefault(node_type, []).append((rule, fn))
    return enter, leave


_KINDS: dict = {}  # class -> 1 a libcst node, 2 a list or tuple, 0 anything else


def _kind(cls) -> int:
    kind = 1 if issubclass(cls, cst.CSTNode) else 2 if cls in (list, tuple) else 0
    _KINDS[cls] = kind
    return kind


def walk(module: cst.Module, ctx: FileContext) -> None:
    """Depth first, in field order; a node type with no leave handler gets no leave marker, and
    what a node type needs (handlers, fields to descend) is looked up once per file."""
    an = ctx.analysis
    enter_tbl, leave_tbl = _dispatch_tables(ctx)
    an_enter, an_leave = analysis_handlers()
    plans: dict = {}
    kinds = _KINDS
    LEAVE = object()
    stack: list = [module]
    push = stack.append
    pop = stack.pop
    while stack:
        node = pop()
        if node is LEAVE:
            node = pop()
            tp = type(node)
            cbs = leave_tbl.get(tp)
            if cbs:
                call_rules(cbs, node, ctx)
            handler = an_leave.get(tp)
            if handler is not None:
                handler(an, node)
            continue
        tp = type(node)
        plan = plans.get(tp)
        if plan is None:
            plan = plans[tp] = (an_enter.get(tp), enter_tbl.get(tp), tp in leave_tbl or tp in an_leave,
                                tuple(reversed(child_fields(tp))))
        handler, cbs, leaves, names = plan
        if handler is not None:
            handler(an, node)
        if cbs:
            call_rules(cbs, node, ctx)
        if leaves:
            push(node)
            push(LEAVE)
        for name in names:
            value = getattr(node, name)
            kind = kinds.get(value.__class__)
            if kind is None:
                kind = _kind(value.__class__)
            if kind == 1:
                push(value)
            elif kind == 2:
                for child in reversed(value):
                    if (kinds.get(child.__class__) or _kind(child.__class__)) == 1:
                        push(child)


def call_rules(cbs: list, node, ctx: FileContext) -> None:
    failed = ctx.failed
    for rule, fn in cbs:
        if rule in failed:
            continue
        try:
            fn(node)
        except Exception as exc:  # one rule's bug must not cost the other rules' findings
            failed.add(rule)
            ctx.crashes.append((rule, node, exc))
