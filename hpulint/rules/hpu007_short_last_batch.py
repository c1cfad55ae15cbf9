"""HPU007 short-last-batch: a DataLoader feeding a lazy-device step loop without drop_last=True.

Source: Gaudi docs, "HPU Graphs for Training": "if the batch size does not divide the
dataset evenly, one will get a batch at the end that is a different shape than the ones that
came before it. This can be handled by using ModuleCacher or by using drop_last=True in the
dataloader." The last, shorter batch records a graph with other shapes: one more compilation
per epoch (and per evaluation pass).
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import dotted, names_in
from hpulint.model import UNSAFE, Fix
from hpulint.rules.base import Rule

LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
MESSAGE = (
    "this DataLoader feeds a training loop on a lazy device ({target}) without `drop_last=True`: "
    "unless the dataset size is a multiple of the batch size, the last batch is shorter and "
    "records a graph with other shapes: one more compilation (and one more graph to keep). Pass "
    "`drop_last=True` (or pad the last batch)"
)
OFF_FLAG = (
    "; here `drop_last={value}` is off unless the script is run with `--{flag}`"
)


class ShortLastBatch(Rule):
    code = "HPU007"
    name = "short-last-batch"
    summary = "a DataLoader feeding a lazy-device step loop without drop_last=True"
    triggers = ("DataLoader",)
    # a lazy-mode rule: it checks each fed loop's own mode (it reports after the walk)
    fix_safety = "unsafe"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.classes: dict = {}  # class name -> its definition, in this file
        self.loaders: list = []  # (Call node, bound name or None, off-by-default flag or None, scope)
        self.dicts: dict = {}  # name -> keys of a dict literal assigned to it
        self.wraps: dict = {}  # name bound to a wrapper of loaders -> the loader names it wraps
        self.bound: dict = {}  # name -> the value assigned to it (None: assigned more than once)
        self.hooks: list = []  # (Call, function, flag): loaders a Lightning train_dataloader() returns
        self.sources: dict = {}  # (id(function), name) -> the names its value was made from
        self.seen: set = set()  # DataLoader calls already considered
        self.local: dict = {}  # (id(function), name) -> the value assigned to it there (None: more than once)
        self.made: dict = {}  # (id(class scope), method name) -> the DataLoader call the method returns
        self.delegates: list = []  # (train_dataloader scope, name of the method of its class it returns)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = dotted(node.targets[0].target)
        value = node.value
        if target:
            self.bound[target] = value if target not in self.bound else None
            key = (id(self.an.function), target)
            self.local[key] = value if key not in self.local else None
            # `tk0 = tqdm(data_loader)`, `tk0 = data_loader`: what a loop over tk0 iterates
            src = [value] if type(value) in (cst.Name, cst.Attribute) else \
                [value.args[0].value] if type(value) is cst.Call and value.args and value.args[0].keyword is None \
                and not value.args[0].star else []  # (a wrapper takes the loader first: `tqdm(loader)`)
            got = {d for d in map(dotted, src) if d}
            if got:
                self.sources.setdefault((id(self.an.function), target), set()).update(got)
        if type(value) is cst.Dict and target:
            self.dicts[target] = {el.key.value.strip("'\"") for el in value.elements
                                  if type(el) is cst.DictElement and type(el.key) is cst.SimpleString}
        elif type(value) is cst.Call and self.an.qualname(value.func) in LOADERS and target:
            self._candidate(value, target)
        elif type(value) is cst.Call and target:
            # a wrapper around a loader: pl.MpDeviceLoader(train_loader, device), iter(loader)...
            wrapped = {dotted(a.value) for a in value.args} & self._loader_names()
            if wrapped:
                self.wraps.setdefault(target, set()).update(wrapped)

    def _loader_names(self) -> set:
        return {name for _, name, _, _ in self.loaders if name} | set(self.wraps)

    def visit_Return(self, node: cst.Return) -> None:
        """`def train_dataloader(self): return DataLoader(...)`: Lightning's hook for the training
        loader (a LightningModule's or a LightningDataModule's); the Trainer's fit loop iterates
        it, one step a batch, and keeps its `drop_last`."""
        value = node.value
        fn = self.an.function
        if fn is None or fn.cls is None:
            return
        if type(value) is cst.Name:  # `dataloader = DataLoader(...)`, then `return dataloader`
            value = self.local.get((id(fn), value.value))
        if type(value) is not cst.Call:
            return
        hook = fn.name.lstrip("_") == "train_dataloader"
        if self.an.qualname(value.func) in LOADERS:
            if hook:
                self._candidate(value, None, hook=fn)
            else:
                self.made[(id(fn.cls), fn.name)] = value
        elif hook and not value.args and type(value.func) is cst.Attribute and type(value.func.value) is cst.Name \
                and value.func.value.value == "self":
            # `return self.__dataloader()`: the class's own method makes the training loader
            self.delegates.append((fn, value.func.attr.value))

    def visit_For(self, node: cst.For) -> None:
        for call in _calls_in(node.iter):
            if self.an.qualname(call.func) in LOADERS:
                self._candidate(call, None)

    def visit_Call(self, node: cst.Call) -> None:
        """Any other `DataLoader(...)`: returned by a factory, passed to a function, kept in a
        container; the project's link says whether a training loop iterates it."""
        if node not in self.seen and self.an.qualname(node.func) in LOADERS:
            self._candidate(node, None)

    def _candidate(self, call: cst.Call, name, hook=None) -> None:
        self.seen.add(call)
        kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        flag = None
        drop = kw.get("drop_last")
        if type(drop) is cst.Attribute:  # drop_last=FLAGS.drop_last: an option, maybe off
            flag = drop.attr.value
        elif drop is not None and not (type(drop) is cst.Name and drop.value == "False"):
            return  # (`drop_last=False` written out keeps the short batch like the default)
        if "batch_sampler" in kw:
            return
        if type(kw.get("batch_size")) is cst.Name and kw["batch_size"].value == "None":
            return
        if type(kw.get("batch_size")) is cst.Integer and kw["batch_size"].evaluated_value == 1:
            return  # one sample a batch: every batch, the last one too, has the same shape
        for a in call.args:
            if a.star == "**":
                keys = self.dicts.get(dotted(a.value) or "")
                if keys is None or "drop_last" in keys or "batch_sampler" in keys:
                    return  # unknown keyword arguments: prefer silence
        if any(a.star == "*" for a in call.args):
            return
        if sum(1 for a in call.args if a.keyword is None and not a.star) > 5:
            return  # drop_last passed positionally
        if hook is not None:
            self.hooks.append((call, hook, flag))
        else:
            self.loaders.append((call, name, flag, self.an.function))

    def finish(self) -> None:
        an = self.an
        for fn, name in self.delegates:
            call = self.made.get((id(fn.cls), name))
            got = next((e for e in self.loaders if e[0] is call), None)
            if got is not None:
                self.loaders.remove(got)
                self.hooks.append((call, fn, got[2]))
        for call, fn, flag in self.hooks:
            target = an.target_of(fn)
            if target is not None and an.lazy_mode(fn) and flag is None and not self._divides(call):
                self.report(call, MESSAGE.format(target=target).replace(
                    "feeds a training loop", "feeds Lightning's training loop (it is `train_dataloader()`)"),
                    fix=_drop_last_fix(call))
        if not self.loaders:
            return
        fed = []
        for loop in an.all_loops:
            if not loop.is_step_loop or type(loop.node) is not cst.For:
                continue
            target = an.target_of(loop.scope)
            if target is None or not an.lazy_mode(loop.scope):
                continue
            facts = an.loop_training(loop)
            if not (facts["backward"] or facts["opt_step"]):
                continue  # an evaluation or inference loop: its short batch is one graph more, once
            it = loop.node.iter
            names = set(names_in(it)) | {d for d in map(dotted, _attrs_in(it)) if d}
            todo = list(names)
            while todo:
                for src in self.sources.get((id(loop.scope), todo.pop()), ()):
                    if src not in names:
                        names.add(src)
                        todo.append(src)
            fed.append((names, it, target, loop.scope))
            fed += self._passed_in(loop.scope, names, it, target)
        for names, _, _, _ in fed:  # a loop over a wrapper feeds the loaders it wraps
            todo = [n for n in names if n in self.wraps]
            while todo:
                for inner in self.wraps[todo.pop()]:
                    if inner not in names:
                        names.add(inner)
                        todo += [inner] if inner in self.wraps else []
        # loaders a loop of their own function iterates: consumed there (a prediction loop), not
        # by another function's parameter of the same name
        consumed = {(id(lp.scope), n) for lp in an.all_loops if type(lp.node) is cst.For
                    for n in names_in(lp.node.iter)}
        for call, name, flag, scope in self.loaders:
            if flag is not None and not an.is_off_flag(flag):
                continue  # an option that may be on: prefer silence
            if self._divides(call):
                continue
            if name is None:
                hit = next((t for _, it, t, _ in fed if call in set(_calls_in(it))), None)
            else:
                own = (id(scope), name) in consumed
                hit = next((t for names, _, t, where in fed
                            if name in names and _visible(name, scope, where, own)), None)
            if not hit:  # a training loop in another function or file iterates it (through returns,
                hit = an.loader_fed(call)  # parameters and attributes: the project's link)
            if hit and flag is not None:
                value = dotted(next(a.value for a in call.args if a.keyword is not None
                                    and a.keyword.value == "drop_last")) or flag
                self.report(call, MESSAGE.format(target=hit) + OFF_FLAG.format(value=value, flag=flag))
            elif hit:
                self.report(call, MESSAGE.format(target=hit), fix=_drop_last_fix(call))

    def _passed_in(self, fn, names: set, it, target) -> list:
        """`self.train_one_epoch(self.train_loader)` where train_one_epoch's loop iterates its
        parameter: the argument is what the loop iterates (calls in this file)."""
        params = [p.lstrip("*") for p in fn.params]
        wanted = [k for k, p in enumerate(params) if p in names and p not in ("self", "cls")]
        if not wanted or fn.kind != "function":
            return []
        out = []
        method = bool(params) and params[0] in ("self", "cls")
        for caller in self.an.all_functions:
            for site in caller.calls:
                if site.name != fn.name:
                    continue
                positional = [a for a in site.node.args if a.keyword is None and not a.star]
                for k in wanted:
                    arg = next((a for a in site.node.args if a.keyword is not None and a.keyword.value == params[k]),
                               None)
                    j = k - 1 if method and type(site.node.func) is cst.Attribute else k
                    if arg is None and 0 <= j < len(positional):
                        arg = positional[j]
                    got = dotted(arg.value) if arg is not None else None
                    if got:
                        out.append(({got}, it, target, caller))
        return out

    def _divides(self, call: cst.Call) -> bool:
        """The batch size divides the dataset: a torchvision dataset of a known size (MNIST's
        60,000 training images) in batches of a literal size (or a name bound once to one)."""
        kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        dataset = kw.get("dataset", positional[0] if positional else None)
        batch = kw.get("batch_size", positional[1] if len(positional) > 1 else None)
        batch, dataset = self._literal(batch), self._literal(dataset)
        if type(batch) is not cst.Integer or type(dataset) is not cst.Call:
            return False
        qn = self.an.qualname(dataset.func) or ""
        sizes = DATASET_SIZES.get(qn.rsplit(".", 1)[-1]) if qn.startswith("torchvision.datasets.") else None
        if sizes is None:
            size = self._own_length(dataset)
            return size is not None and int(batch.value) > 0 and size % int(batch.value) == 0
        train = next((a.value for a in dataset.args if a.keyword is not None and a.keyword.value == "train"), None)
        if train is not None and not (type(train) is cst.Name and train.value in ("True", "False")):
            return False
        size = sizes[1] if train is not None and train.value == "False" else sizes[0]
        n = int(batch.value)
        return n > 0 and size % n == 0

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes[node.name.value] = node

    def _own_length(self, call: cst.Call):
        """The length of a dataset class of this file, called with a literal for the parameter its
        `__len__` returns (`RandomDataset(num_samples=1024, ...)` whose `__len__` is `return
        self.num_samples`, set from `num_samples` in `__init__`), else None."""
        cls = self.classes.get(call.func.value) if type(call.func) is cst.Name else None
        if cls is None:
            return None
        methods = {st.name.value: st for st in cls.body.body if type(st) is cst.FunctionDef}
        length, init = methods.get("__len__"), methods.get("__init__")
        body = length.body.body if length is not None and type(length.body) is cst.IndentedBlock else ()
        ret = body[0].body[0] if len(body) == 1 and type(body[0]) is cst.SimpleStatementLine else None
        if type(ret) is not cst.Return or type(ret.value) is not cst.Attribute or init is None \
                or dotted(ret.value.value) != "self":
            return None
        attr = ret.value.attr.value
        params = [q.name.value for q in init.params.params]
        source = None
        for st in init.body.body if type(init.body) is cst.IndentedBlock else ():
            for small in st.body if type(st) is cst.SimpleStatementLine else ():
                if type(small) is cst.Assign and any(
                        type(t.target) is cst.Attribute and dotted(t.target) == f"self.{attr}" for t in small.targets):
                    source = small.value if source is None else False  # (set twice: not known)
        if type(source) is not cst.Name or source.value not in params[1:]:
            return None
        given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == source.value), None)
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        index = params.index(source.value) - 1
        if given is None and 0 <= index < len(positional):
            given = positional[index]
        given = self._literal(given) if given is not None else None
        return int(given.value) if type(given) is cst.Integer else None

    def _literal(self, node):
        """The value a name (or `self.<name>`) is bound to once in the file (`BATCH_SIZE = 32`,
        `self.mnist_train = MNIST(...)` in a data module's setup()), else the node."""
        seen = 0
        while type(node) in (cst.Name, cst.Attribute) and dotted(node) in self.bound and seen < 4:
            node, seen = self.bound[dotted(node)], seen + 1
        return node


def _visible(name: str, scope, where, own: bool) -> bool:
    """Whether the loader bound to ``name`` in ``scope`` is the ``name`` a loop in ``where`` reads:
    the same function; a module-level name the function does not bind itself; a parameter of
    that name (`def train(model, train_loader, opt)`: given the loader named so), unless a loop
    of the loader's own function iterates it (``own``: it is consumed there). An attribute,
    `self.train_loader`, is the object's wherever it is read."""
    if "." in name or scope is where:
        return True
    if name in where.params:
        return not own
    return scope.kind == "module" and name not in where.bindings


# training and test sizes of torchvision datasets whose sizes are fixed
DATASET_SIZES = {
    "MNIST": (60000, 10000), "FashionMNIST": (60000, 10000), "KMNIST": (60000, 10000),
    "CIFAR10": (50000, 10000), "CIFAR100": (50000, 10000),
}


def _calls_in(node: cst.CSTNode):
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Call:
            yield n
            stack.append(n.func)
            stack.extend(a.value for a in n.args)
        elif type(n) is cst.Attribute:
            stack.append(n.value)


def _attrs_in(node: cst.CSTNode):
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Attribute:
            yield n
        elif type(n) is cst.Call:
            stack.append(n.func)
            stack.extend(a.value for a in n.args)


def _drop_last_fix(call: cst.Call) -> Fix:
    args = list(call.args)
    given = next((k for k, a in enumerate(args) if a.keyword is not None and a.keyword.value == "drop_last"), None)
    if given is not None:  # `drop_last=False`: turned into True
        args[given] = args[given].with_changes(value=cst.Name("True"))
        return Fix(UNSAFE, "pass drop_last=True (the last partial batch is skipped)",
                   {call: call.with_changes(args=args)})
    new = cst.Arg(keyword=cst.Name("drop_last"), value=cst.Name("True"),
                  equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                        whitespace_after=cst.SimpleWhitespace("")))
    if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    elif args and type(args[-1].comma) is cst.Comma:
        new = new.with_changes(comma=args[-1].comma)  # keep a trailing comma's layout
    replacement = call.with_changes(args=[*args, new])
    return Fix(UNSAFE, "pass drop_last=True (the last partial batch is skipped)", {call: replacement})
