"""A dict or list attribute of a compiled module that grows between its calls while ``forward`` reads
its length, for HPU016.

An open-set classifier that registers new label names in ``self.labels`` (a dict or a list made in
``__init__``) from the training loop, and whose ``forward`` cuts its logits to ``len(self.labels)``:
Dynamo reads the container's length as a constant of the graph and guards on it
(``len(self.labels) == 3``), never making it dynamic, so each new length is a recompile. Measured on
torch 2.13 (CPU, ``eager`` backend): a label added before each of 6 calls, through a method of the
module (``model.add_label(name)``, ``self.labels.setdefault(name, len(self.labels))`` or
``append``) or directly (``model.labels[name] = i``): 6 graphs, 5 recompiles; an intent dict that
gains two names per batch over 8 batches: 8 graphs. The same growth with a ``forward`` that does not
read the container: 1 graph; the count kept in a buffer (``self.num_active.fill_(n)``) and used in a
mask: 1 graph.

A ``forward`` that reads the container's contents rather than its length guards on them too: a
residual MLP whose ``forward`` tests ``if i in self.frozen:`` while the training loop adds the next
block's index to ``model.frozen`` (a ``set()`` made in ``__init__``) each epoch, progressive
freezing, compiles again after every change (5 epochs, 5 graphs, 4 recompiles; the set filled once
before the loop: 1 graph).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code
from hpulint.rules.compile_state import is_self_attr

GROWERS = frozenset({"append", "extend", "insert", "setdefault", "update", "add"})
EMPTY_MAKERS = frozenset({"dict", "list", "set", "OrderedDict", "collections.OrderedDict", "defaultdict",
                          "collections.defaultdict"})
MESSAGE = (
    "`{grow}` in the loop grows `{attr}` of the compiled `{compiled}` ({cls}: a {kind} made in `__init__`) "
    "between its calls, and {cls}.forward() reads `len(self.{attr})`: Dynamo takes the length as a constant "
    "of the graph and guards on it (never made dynamic), so each new length is a recompile, and once it has "
    "recompiled `recompile_limit` ({limit}) times Dynamo runs forward eagerly for the rest of the run (eager "
    "fallback). Keep "
    "the count in a tensor buffer updated in place (`self.num_active.fill_(n)`) and mask the spare rows "
    "with it, or keep the output at its full width and cut it in the eager code"
)
CONTENTS = (
    "`{grow}` in the loop changes `{attr}` of the compiled `{compiled}` ({cls}: a {kind} made in `__init__`) "
    "between its calls, and {cls}.forward() reads it: Dynamo guards on the contents of a container the traced "
    "code reads (its length, items or keys), so each change compiles forward again, and after "
    "`recompile_limit` ({limit}) Dynamo runs it eagerly for the rest of the run (eager fallback). Keep the "
    "flags in a tensor buffer updated in place (`self.frozen_mask[i] = True`), or settle the container "
    "before the loop"
)


class GrownContainers:
    """Filled while the file is walked (HPU016 calls it), asked after the walk."""

    def __init__(self) -> None:
        self.made: dict = {}  # (class, attr) -> "dict"/"list": `self.<attr> = {}` in __init__
        self.len_reads: set = set()  # (class, attr): `len(self.<attr>)` in forward
        self.methods: dict = {}  # (class, method) -> attr it grows (`self.<attr>.append(...)`)
        self.grows: list = []  # (statement or call, receiver name, attr or method, loop, is a method call)

    def assign(self, an, node: cst.Assign) -> None:
        cls, fn = an.current_class, an.function
        if len(node.targets) != 1:
            return
        tgt = node.targets[0].target
        if cls is not None and fn.kind == "function" and fn.name == "__init__" and is_self_attr(tgt):
            kind = _empty(an, node.value)
            if kind is not None:
                self.made[(cls.name, tgt.attr.value)] = kind
            return
        if type(tgt) is cst.Subscript:  # `self.labels[name] = i` / `model.labels[name] = i`
            self._grown(an, node, tgt.value)

    def call(self, an, node: cst.Call) -> None:
        func = node.func
        cls, fn = an.current_class, an.function
        if type(func) is cst.Name and func.value == "len" and len(node.args) == 1 and cls is not None \
                and fn.kind == "function" and fn.name == "forward" and is_self_attr(node.args[0].value):
            self.len_reads.add((cls.name, node.args[0].value.attr.value))
            return
        if type(func) is not cst.Attribute:
            return
        if func.attr.value in GROWERS and node.args:
            self._grown(an, node, func.value)
        elif an.loop is not None and type(func.value) is cst.Name and func.value.value != "self":
            self.grows.append((node, func.value.value, func.attr.value, an.loop, True))

    def _grown(self, an, node, container: cst.BaseExpression) -> None:
        if type(container) is not cst.Attribute:
            return
        owner, attr = container.value, container.attr.value
        cls, fn = an.current_class, an.function
        if type(owner) is cst.Name and owner.value == "self":
            if cls is not None and fn.kind == "function" and fn.name not in ("__init__", "forward"):
                self.methods.setdefault((cls.name, fn.name), attr)
        elif type(owner) is cst.Name and an.loop is not None:
            self.grows.append((node, owner.value, attr, an.loop, False))

    def findings(self, built: dict, loop_calls: list, compiled_of: dict, limit: int, reads=()) -> list:
        """(compiled call, message), once per compiled callable: a loop that grows a container the
        compiled module's forward reads the length of (or, directly grown, reads at all: ``reads``,
        the (class, attr) forward reads), directly or through a method of the module, and calls the
        compiled module (``built``: name -> classes called to make it; ``loop_calls``: (callee code,
        loop, call); ``compiled_of``: compiled name -> the instance it compiles)."""
        out, done = [], set()
        for node, inst, name, loop, is_method in self.grows:
            for cls in sorted(built.get(inst, ())):
                attr = self.methods.get((cls, name)) if is_method else name
                if attr is None or (cls, attr) not in self.made:
                    continue
                template = MESSAGE if (cls, attr) in self.len_reads else \
                    CONTENTS if not is_method and (cls, attr) in reads else None
                if template is None:
                    continue
                calls = [(callee, call) for callee, where, call in loop_calls
                         if compiled_of.get(callee) == inst and callee not in done
                         and (loop in where.chain() or where in loop.chain())]
                if not calls:
                    continue
                callee, call = calls[0]
                done.add(callee)
                grow = code(node).strip().splitlines()[0]
                out.append((call, template.format(grow=grow, attr=attr, compiled=callee, cls=cls,
                                                  kind=self.made[(cls, attr)], limit=limit)))
                break
        return out


def _empty(an, value) -> Optional[str]:
    """"dict" or "list" for an empty container: `{}`, `[]`, `dict()`, `list()`, `OrderedDict()`."""
    if type(value) is cst.Dict and not value.elements:
        return "dict"
    if type(value) is cst.List and not value.elements:
        return "list"
    if type(value) is cst.Call and not value.args:
        name = code(value.func)
        if name in EMPTY_MAKERS or (an.qualname(value.func) or "") in EMPTY_MAKERS:
            return name if name in ("list", "set") else "dict"
    return None
