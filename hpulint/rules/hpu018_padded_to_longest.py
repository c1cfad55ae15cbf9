"""HPU018 padded-to-longest: a batch padded to its own longest sequence, every step, on a lazy device.

Sources: Gaudi docs, "Handling Dynamic Shapes": varying sentence lengths in language models are
dynamic inputs that "may cause constant re-compilations"; pad or bucket them. PyTorch/XLA,
"Troubleshooting recompilations", #1 "From input dataset": "Without normalization, it'll cause
recompilation for every new input shape". `tokenizer(texts, padding=True, return_tensors="pt")`
pads to the longest text of *this* batch, so the sequence length is new whenever the longest text
is: a new graph on the device, as a batch size that changes every step is in the Habana blog
"Detecting frequent graph re-compilations".
"""
from __future__ import annotations

import re

import libcst as cst

from hpulint.analysis.names import SETUP_METHODS
from hpulint.analysis.syntax import dotted, names_in
from hpulint.rules.base import Rule

MESSAGE = (
    "`padding={value}` pads each batch to its own longest sequence {why}. Pad to one length "
    "(`padding=\"max_length\", max_length=N`) or to a few buckets (`pad_to_multiple_of=N`)"
)
WHY = (
    "{where}: the sequence length changes from batch to batch, and on a lazy device ({target}) "
    "every new length records a graph with new shapes and compiles again"
)

COLLATE_KEYWORDS = frozenset({"collate_fn", "data_collator"})
ONCE_FUNCTIONS = SETUP_METHODS | {"main", "__main__"}
# functions named for what runs once: a server's `initialize()`, a `warmup()`, `load_model()`
_ONCE_NAME = re.compile(r"^_*(?:main|init|initiali[sz]e|setup|set_up|warm_?up|load|build|prepare|create)(?:_|$)")
_LONGEST = frozenset({"True", '"longest"', "'longest'"})


def _keyword(call: cst.Call, name: str):
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    return None


def _text(node) -> str:
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.SimpleString:
        return node.value
    return ""


class PaddedToLongest(Rule):
    code = "HPU018"
    name = "padded-to-longest"
    summary = ("a tokenizer call padding each batch to its own longest text (padding=True/\"longest\") where "
               "the batch goes to a lazy device every step, every batch (a collator) or every call of a "
               "function that runs a model")
    triggers = ("padding",)
    lazy_mode_only = True

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.collators: dict = {}  # a function or class name -> how it is given (`collate_fn=`)
        self.made: dict = {}  # name -> the class a call bound to it makes (`c = Collator(tok)`)
        self.padded: dict = {}  # (id(function), name) -> the padding call bound to the name
        self.to_device: set = set()  # ids of padding calls whose tensors are moved to a device
        self.fed: list = []  # (padding call id, callee value): its tensors passed to a call
        self.run_once: set = set()  # names of functions module-level code calls (a script's entry)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:
            return
        name = node.targets[0].target.value
        value = node.value
        if type(value) is cst.Call:
            made = dotted(value.func)
            if made:
                self.made[name] = made
        key = (id(self.an.function), name)
        call = self._root_call(value)
        if call is not None:
            self.padded[key] = call  # `inputs = tok(...)`, `ids = inputs.input_ids.to(device)`
        else:
            # (`inputs = adjust_batch(inputs, size)`: a helper may pad it to a fixed size, as
            # optimum-habana's does)
            self.padded.pop(key, None)

    def _root_call(self, node):
        """The padding call ``node`` is, or reads a part of, or casts or moves (`tok(...).input_ids`,
        `inputs["input_ids"].to(device)`), directly or through a name bound to one."""
        while True:
            if type(node) in (cst.Attribute, cst.Subscript):
                node = node.value
            elif type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "to":
                node = node.func.value
            elif type(node) is cst.DictComp and type(node.for_in.iter) is cst.Call \
                    and type(node.for_in.iter.func) is cst.Attribute and node.for_in.iter.func.attr.value == "items":
                node = node.for_in.iter.func.value  # `{k: v.to(d) for k, v in inputs.items()}`
            else:
                break
        if type(node) is cst.Name:
            return self.padded.get((id(self.an.function), node.value))
        return node if type(node) is cst.Call and _keyword(node, "padding") is not None else None

    def _note_use(self, node: cst.Call) -> None:
        """Where a padded batch goes: moved to a device (`.to(device)`), spread into a call
        (`model(**inputs)`), or passed to a call (checked to be a model's when linked)."""
        func = node.func
        if type(func) is cst.Attribute and func.attr.value in ("to", "cuda", "hpu") and node.args \
                and not all(a.keyword is not None and a.keyword.value == "dtype" for a in node.args):
            call = self._root_call(func.value)
            if call is not None:
                self.to_device.add(id(call))
                return
        for a in node.args:
            call = self._root_call(a.value)
            if call is None:
                continue
            if a.star == "**":
                self.to_device.add(id(call))
            else:
                self.fed.append((id(call), self.an.value(func)))

    def visit_DictComp(self, node: cst.DictComp) -> None:
        """`{k: v.to(device) for k, v in inputs.items()}`: the batch moved part by part."""
        it, value = node.for_in.iter, node.value
        if type(it) is cst.Call and type(it.func) is cst.Attribute and it.func.attr.value == "items" \
                and type(value) is cst.Call and type(value.func) is cst.Attribute \
                and value.func.attr.value in ("to", "cuda", "hpu"):
            call = self._root_call(it.func.value)
            if call is not None:
                self.to_device.add(id(call))

    def _reaches_device(self, call: cst.Call) -> bool:
        if id(call) in self.to_device:
            return True
        an = self.an
        return any(c == id(call) and (an.is_model(v) or an.kind(v) == "model") for c, v in self.fed)

    def visit_Call(self, node: cst.Call) -> None:
        if self.an.function.kind == "module" and type(node.func) is cst.Name:
            self.run_once.add(node.func.value)  # `if __name__ == "__main__": demo()`
        self._note_collator(node)
        self._note_use(node)
        padding = _keyword(node, "padding")
        if padding is None or _text(padding) not in _LONGEST:
            return
        # tensors for the device (`return_tensors="pt"`); lists are the caller's to pad
        if _text(_keyword(node, "return_tensors")).strip("'\"") != "pt":
            return
        bucket = _keyword(node, "pad_to_multiple_of")
        if bucket is not None and _text(bucket) != "None":
            return  # a few bucket lengths, not one per batch
        an = self.an
        here = an.here()
        fn = here.function
        cls = an.current_class

        def when():
            target = an.target_of(fn)
            if target not in ("hpu", "xla") or an.device_excluded(here):
                return None
            where = self._per_batch(fn, cls)  # a collate function returns the batch for the device
            if where is None and self._reaches_device(node):
                where = None if self._same_texts(here, node) else an.every_step(here) or self._per_call(here)
            return None if where is None else WHY.format(where=where, target=target)

        self.report(node, MESSAGE.format(value=_text(padding), why="{why}"), when=when)

    def _same_texts(self, here, node: cst.Call) -> bool:
        """Padded in a step loop from texts no pass of it changes (a benchmark's fixed prompts):
        the longest is the same every pass, and so is the length."""
        bound = self.an.step_bound_names(here)
        if bound is None:
            return False
        read = {n for a in node.args if a.keyword is None or a.keyword.value not in ("padding", "return_tensors")
                for n in names_in(a.value)}
        return not bound.intersection(read)

    def _note_collator(self, node: cst.Call) -> None:
        """`DataLoader(ds, collate_fn=collate)`, `Trainer(..., data_collator=DataCollator(tok))`:
        the function, or the class whose instance is called, runs once per batch."""
        for a in node.args:
            if a.keyword is None or a.keyword.value not in COLLATE_KEYWORDS:
                continue
            value = a.value
            name = dotted(value.func) if type(value) is cst.Call else dotted(value)
            if type(value) is cst.Name and value.value in self.made:
                name = self.made[value.value]
            if name:
                self.collators[name.rsplit(".", 1)[-1]] = f"`{a.keyword.value}=` of `{dotted(node.func) or 'a call'}`"

    def _per_batch(self, fn, cls):
        """In a collate function of this file (or its class's `__call__`): every batch."""
        if fn.kind != "function":
            return None
        how = self.collators.get(fn.name) if cls is None else \
            self.collators.get(cls.name) if fn.name == "__call__" else None
        return f"in a collate function ({how}), once per batch" if how else None

    def _per_call(self, here):
        """Padded in the body of a function that runs a model on it: every call of the function
        (a request, a batch of an evaluation) gets its own length."""
        fn = here.function
        if fn.kind != "function" or here.loop is not None or fn.name in ONCE_FUNCTIONS \
                or _ONCE_NAME.match(fn.name) or (fn.cls is None and fn.name in self.run_once):
            return None
        why = getattr(fn, "model_reason", None)
        if not why:
            return None
        return f"in {fn.name}(), which {why}, and each call runs it on a batch padded to its own length"
