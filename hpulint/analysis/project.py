"""The project: every file's summary, with imports resolved across files.

Modules are named by their path under the project root (``pkg/utils.py`` -> ``pkg.utils``). An
import is resolved the way Python would find it for that file: a script's own folder first (it
is ``sys.path[0]`` when the script runs), a package's absolute imports from the root, then the
folders above (``src/`` layouts). A dotted reference such as ``pkg.utils.helper`` resolves to a
project function, class or module, through re-exports (``from .models import Net`` in a
package's ``__init__``); anything else is external.

:class:`~hpulint.analysis.envs.GlobalEnv` answers the leaves of values (:mod:`hpulint.analysis.values`) from the
summaries: what a project function returns, what a parameter holds (the evidence of its uses,
else the values its callers pass), what ``self.<attr>`` holds (through the base classes), and
whether a class is a model (``nn.Module``, a Lightning module or another framework model base,
through any chain of project classes, or an unknown base when the class defines ``forward``).
"""
from __future__ import annotations

from typing import Optional

from hpulint.analysis.call_sites import Callers
from hpulint.analysis.classes import ClassQueries
from hpulint.analysis.symbols import Symbols
from hpulint.analysis.envs import GlobalEnv, ShallowEnv, prefer, val_of
from hpulint.analysis.names import MODULE_METHODS, is_housekeeping_name, is_model_fn_param, is_model_name
from hpulint.analysis.registries import registered, registered_methods
from hpulint.analysis.resolve import Resolver
from hpulint.analysis.value_json import from_json
from hpulint.analysis.values import HOST, INST, MODEL, R, SYM, TENSOR, TUPLE, UNKNOWN, Attr, CallV, Param, Val, substitute

# methods libraries' objects share with some project models (a tokenizer's `encode`, a scheduler's
# `step`): on an object of unknown kind they say nothing about a model
LIBRARY_METHODS = frozenset({"encode", "decode", "batch_decode", "batch_encode_plus", "encode_plus", "tokenize",
                             "step", "update", "get", "set", "add", "append", "extend", "pop", "items", "keys",
                             "values", "copy", "save", "load", "read", "write", "close", "run", "call", "apply",
                             "sample", "log", "info", "put", "send", "reset", "compute", "transform", "predict"})


COMPILER_DISABLE = frozenset({"torch.compiler.disable", "torch._dynamo.disable", "torch._disable_dynamo",
                              "torch._dynamo.eval_frame.disable"})


class Project(ClassQueries, Symbols, Callers):
    def __init__(self, summaries: list) -> None:
        self.modules: dict = {}  # module id -> summary
        self.functions: dict = {}  # fid -> (module, summary of the function)
        self.classes: dict = {}  # cid -> (module, summary of the class)
        for s in summaries:
            mod = s["module"]
            self.modules[mod] = s
            for fid, f in s["functions"].items():
                self.functions[fid] = (mod, f)
            for cid, c in s["classes"].items():
                self.classes[cid] = (mod, c)
        # argparse options that are False unless given, anywhere in the project
        self.off_flags = {f for s in summaries for f in s.get("off_flags", ())}
        self._vals: dict = {}
        self._dotted: dict = {}
        self._symbols: dict = {}
        self._models: dict = {}
        self._mro: dict = {}
        self._returns_params: dict = {}  # fid -> whether it returns one of its parameters
        self._returning: set = set()  # fids whose ret_with is being computed (recursive returns)
        self._mixins: dict = {}  # cid -> whether a project model class derives from it
        self._installed: Optional[set] = None  # cids whose functions are installed on models (MethodType)
        self._bumped_attrs: Optional[dict] = None
        self._by_stem: Optional[dict] = None
        self._subclass_map: Optional[dict] = None
        self.callers: dict = {}  # fid -> [(args, kwargs, shift)]
        self.spread_into: set = set()  # fids some call gives `**kwargs`
        self._calls: dict = {}  # fid -> calls(fid)
        self.registries: Optional[dict] = None  # (module, registry name) -> fids (analysis.registries)
        self.shallow = Resolver(ShallowEnv(self))
        self._build_callers()
        self.env = GlobalEnv(self)
        self.resolve = Resolver(self.env)

    # --- values ------------------------------------------------------------------------------

    def val(self, j, module: str) -> Val:
        """A value of ``module``'s summary, its references made absolute."""
        key = id(j)
        hit = self._vals.get(key)
        if hit is None or hit[0] is not j:
            v = from_json(j, lambda ref: self.absolute(ref, module))
            self._vals[key] = hit = (j, v)
        return hit[1]

    # --- classes -----------------------------------------------------------------------------

    def returns_params(self, fid: str) -> bool:
        """Does the function return (a value built from) one of its own parameters?"""
        hit = self._returns_params.get(fid)
        if hit is None:
            f = self.functions[fid][1]
            hit = self._returns_params[fid] = f["ret"] is not None and bool(_params_in(f["ret"], fid))
        return hit

    def ret_with(self, fid: str, args: tuple) -> R:
        """What function ``fid``, which returns one of its parameters, returns for a call passing
        ``args`` ((position or keyword, resolved value) pairs): `default(num_steps, 1)` is an int
        at that call, whatever other callers pass; parameters the call leaves out keep what the
        project's callers pass."""
        if fid in self._returning:  # `def f(x): return f(g(x))`: each level substitutes anew
            return self.env.ret(fid)
        self._returning.add(fid)
        try:
            return self._ret_with(fid, args)
        finally:
            self._returning.discard(fid)

    def _ret_with(self, fid: str, args: tuple) -> R:
        mod, f = self.functions[fid]
        params = f["params"]
        mapping = {}
        for k, res in args:
            name = params[k] if isinstance(k, int) and k < len(params) else k
            if isinstance(name, str) and name in params:
                mapping[name] = val_of(res)
        got = self.resolve(substitute(self.val(f["ret"], mod), fid, mapping))
        # (an argument the returned value does not mention, `device` in `return
        # MpDeviceLoader(loader, device)` as summarised, cannot be what comes back)
        used = _params_in(f["ret"], fid)
        args = tuple((k, res) for k, res in args
                     if (params[k] if isinstance(k, int) and k < len(params) else k) in used)
        if any(res.kind == UNKNOWN for _, res in args):
            # an argument this call passes is unknown: its answer stands only where it is what a
            # known argument brought back (`default(n, 1)`: the 1); the rest the callers decide
            if got.kind in {res.kind for _, res in args if res.kind != UNKNOWN}:
                return got
            if got.kind == TUPLE:  # `retrieve_timesteps(self.scheduler, n)`: part by part
                return prefer(got, self.env.ret(fid))
            return self.env.ret(fid)
        if got.kind == TUPLE:  # parts the arguments leave unknown: what the callers decide
            return prefer(got, self.env.ret(fid))
        return got

    def calls(self, fid: str) -> list:
        """(loop index, callee Val, args, kwargs, tainted, deferred, name, guarded) of every call
        ``fid`` makes (guarded: under a logging-interval or run-once test). Made once per
        function: the link reads them twice."""
        got = self._calls.get(fid)
        if got is None:
            mod, f = self.functions[fid]
            got = self._calls[fid] = []
            for c in f["calls"]:
                args = tuple(self.val(a, mod) if a is not None else None for a in c[2])
                kwargs = {k: self.val(v, mod) for k, v in c[3].items()}
                got.append((c[1], self.val(c[0], mod), args, kwargs, c[4], c[5], c[6], c[7]))
        return got

    def targets(self, callee: Val, name: str = "", depth: int = 0) -> list:
        """Every classification a callee can have: a parameter called (`model(x)` in a sampling
        helper) is what its callers pass, each of them; a callee nothing resolves is a model when
        its name says so."""
        if isinstance(callee, Param) and depth < 3:
            out = [t for v in self.passed(callee) for t in self.targets(v, name, depth + 1)]
            if out:
                return out
        if callee.tag == "call" and isinstance(callee.base, Param) and depth < 3:
            # `forward_step = forward_step(model, context)`, then `forward_step(tokens)`: an
            # instance of the class the callers pass (or the parameter's default) is called
            out = [t for v in self.passed(callee.base) for t in self.targets(CallV(v), name, depth + 1)]
            if out:
                return out
        got = self.classify(callee)
        if got is None:
            registered = self.registered(callee)
            if registered:
                return [("fn", fid, 0) for fid in registered]
            methods = registered_methods(self, callee)
            if methods:
                return [("fn", fid, 1) for fid in methods]
        if got is None and callee.tag == "attr" and isinstance(callee.base, Param) and depth < 3:
            # `model.module(inputs)` in a helper whose callers pass models, and one caller a
            # configuration by mistake: the join of what they pass names the configuration's
            # class, but each model passed has its method called
            out = [t for v in self.passed(callee.base) for t in self.targets(Attr(v, callee.name), name, depth + 1)]
            if out:
                return out
        if got is None and callee.tag == "attr" and isinstance(callee.base, Param) and callee.base.name == "self":
            # `self._maskgit_update(...)` in a module-level `def _sample(self, ...)`: functions
            # written to be installed as methods (`setattr(self, name, MethodType(fn, self))`)
            # call their siblings of the module through self
            sibling = self._self_sibling(callee.base.fid, callee.name)
            if sibling is not None:
                return [("fn", sibling, 1)]
        if got is None and callee.tag == "attr" and callee.name == "apply":
            fns = self._function_apply(callee)
            if fns:
                return fns
        if got is None and callee.tag == "attr" and self.resolve(callee.base).kind == MODEL:
            # (as below; also when the class is known but lacks the method, the wrong one of the
            # classes callers pass: `self.module.run_train()`)
            few = self._few_model_methods(callee)
            if few:
                # (a getter is a function of the model, not a run of it: `get_inputs_embeds()`
                # calls a model only if its body does)
                how = "fn" if is_housekeeping_name(callee.name) else "model"
                return [(how, fid, 1) for fid in few]
        if got is None and callee.tag == "attr" and callee.base.tag == "self":
            # a method only the subclasses define (`self.possible_correction_step(...)`)
            fns = self._overrides(callee.base.cls, callee.name, "")
            if fns:
                return fns
        if got is not None:
            if got[0] == "fn":
                more = [m for m in self.alternatives(callee) if m[1] != got[1]]
                if more:
                    return [got, *more]
            if got[0] == "model" and got[1] is None:
                held = self.held_forwards(self.resolve(callee))
                if held:
                    return [("model", fid, 1) for fid in held]
            if got[0] == "model" and got[1] is None:
                # a method of a model whose class is not known, that few project model classes
                # define (a wrapper's `run_train()`): the model is one of those
                few = self._few_model_methods(callee)
                if few:
                    return [("model", fid, 1) for fid in few]
            if got[0] == "fn" and got[2] == 1 and callee.tag == "attr" and callee.base.tag == "self":
                return [got, *self._overrides(callee.base.cls, callee.name, got[1])]
            return [got]
        if callee.tag == "attr" and isinstance(callee.base, Param) and callee.base.name != "self" \
                and callee.name not in LIBRARY_METHODS and not self.callers.get(callee.base.fid) \
                and callee.base.fid in self.functions and self.functions[callee.base.fid][1]["cls"] is None \
                and self.resolve(callee.base).kind == UNKNOWN and not self.plain_methods(callee.name):
            # `sde.mu(t, y)` on a parameter of a module-level function nothing in the project
            # calls (a sampler library's entry point): a method only few project model classes
            # define, and no other class (`PluginReverseSDE.mu` runs the score network), is one of
            # theirs (not in a class's methods, which frameworks and mixins call)
            few = self._few_model_methods(callee)
            if few:
                return [("model", fid, 1) for fid in few]
        if name and is_model_name(name) and self.resolve(callee).kind in (UNKNOWN, TENSOR, HOST):
            # (a tensor is never called: `net = pickle.load(f)["ema"].to(device)` is a module
            # moved to the device, and `net(x, sigma)` runs it)
            return [("model", None, 1)]
        return []

    def _function_apply(self, callee: Val) -> list:
        """`CheckpointFunction.apply(...)` of a project `torch.autograd.Function`: it runs the
        class's `forward` now and its `backward` in the same step's backward pass."""
        base = self.resolve(callee.base)
        sym = self.symbol(base.ref) if base.kind == SYM and base.ref else None
        if sym is None or sym[0] != "cls":
            return []
        if not any(b.rsplit(".", 1)[-1] == "Function" for b in self.external_bases(sym[1])):
            return []
        return [("fn", fid, 1) for fid in (self.method(sym[1], "forward"), self.method(sym[1], "backward")) if fid]

    def disabled(self, fid: str) -> bool:
        """The function is decorated with `torch.compiler.disable` (or `torch._dynamo.disable`):
        Dynamo never traces it; a call of it from compiled code is a graph break."""
        entry = self.functions.get(fid)
        return entry is not None and any(d in COMPILER_DISABLE for d in entry[1]["decorators"])

    def held_forwards(self, v: R) -> list:
        """The ``forward`` of each project module a container holds (`nn.Sequential(Block(), ...)`,
        an item of `nn.ModuleList(...)`): what calling it, or one of its items, runs."""
        if v.kind != MODEL or v.ref is not None:
            return []
        out = []
        for part in v.parts:
            fid = self.method(part.ref, "forward") if part.ref else None
            if fid is not None and fid not in out:
                out.append(fid)
        return out

    def registered(self, callee: Val) -> list:
        """The functions a registry getter's result may be (see analysis.registries)."""
        return registered(self, callee)

    def classify(self, callee: Val, resolver: Optional[Resolver] = None) -> Optional[tuple]:
        """What a call's callee is: ("fn", fid, shift), ("model", fid or None, shift), or None.

        ``shift`` is 1 when the call binds ``self`` (a method called on an instance)."""
        res = resolver or self.resolve
        t = callee.tag
        if t == "attr" and not (callee.base.tag == "k" and callee.base.kind == UNKNOWN):
            base = res(callee.base)
            name = callee.name
            if base.kind == SYM and base.ref:
                return self._classify_symbol(self.symbol(base.ref + "." + name), res)
            if base.kind in (MODEL, INST) and base.ref:
                fid = self.method(base.ref, name)
                if fid is not None and self.is_property(fid):
                    return self._classify_value(res(callee), callee, res)  # `self.model(x)`, a property
                if fid is not None:
                    if base.kind == MODEL and name in ("forward", "__call__"):
                        return ("model", fid, 1)
                    # a static method called through an instance binds nothing
                    return ("fn", fid, 0 if self._decorated(fid, "staticmethod") else 1)
                # not a method: an attribute called (`self.encoder(x)`, `self.act(x)`)
                return self._classify_value(res(callee), callee, res)
            if base.kind == MODEL and name not in MODULE_METHODS and not is_housekeeping_name(name):
                return ("model", None, 1)  # a method of a library model: model.decode(z)
            if base.kind == UNKNOWN and name == "forward":
                return ("model", None, 1)  # `self.forward(x)` in a function installed as a method
            return None
        return self._classify_value(res(callee), callee, res)

    def _classify_value(self, v: R, callee: Val, res) -> Optional[tuple]:
        if v.kind == SYM and v.ref:
            return self._classify_symbol(self.symbol(v.ref), res)
        if v.kind == MODEL:
            fid = self.method(v.ref, "forward") if v.ref else None
            return ("model", fid, 1)
        if v.kind == INST and v.ref:
            fid = self.method(v.ref, "__call__")
            if fid:
                return ("fn", fid, 1)
            if callee.tag == "self" and self.mixed_into_model(v.ref):
                return ("model", None, 1)  # `self(**inputs)` in a mixin of a model (generate())
            return None
        if v.kind == UNKNOWN and isinstance(callee, Param) and (is_model_name(callee.name)
                                                                or is_model_fn_param(callee.name)):
            return ("model", None, 1)
        return None

    def _classify_symbol(self, sym: Optional[tuple], res) -> Optional[tuple]:
        if sym is None:
            return None
        if sym[0] == "fn":
            # `Cls.build(x)`: a class method binds the class
            return ("fn", sym[1], 1 if self._decorated(sym[1], "classmethod") else 0)
        if sym[0] == "cls":
            init = self.method(sym[1], "__init__")
            return ("fn", init, 1) if init else None
        if sym[0] == "val":
            return self.classify(sym[1], res)
        return None

    def alternatives(self, callee: Val, resolver: Optional[Resolver] = None) -> list:
        """The other functions a call of a pick from a table of functions may run
        (`{"heun": sample_heun, "dpm": sample_dpm}[name](...)`), or a method of an object built
        from one of several classes may run: classify() gives the first."""
        if callee.tag == "attr":
            return self._other_classes(callee, resolver or self.resolve)
        if callee.tag in ("k", "self"):
            return []
        v = (resolver or self.resolve)(callee)
        if v.kind != SYM or len(v.parts) < 2:
            return []
        out = []
        for p in v.parts[1:]:
            c = self._classify_symbol(self.symbol(p.ref), resolver or self.resolve)
            if c is not None and c[1] is not None:
                out.append(c)
        return out

    def _other_classes(self, callee: Val, res) -> list:
        """`self.decoder.update(...)` where `self.decoder` is a `BeamSearchDecoder(...)` on one
        path and a `GreedyDecoder(...)` on another: the method of each class after the first."""
        base = callee.base
        elements = base.tag == "elem"  # `for f in self.logit_filters: f.apply(...)`: each class appended
        if elements:
            base = base.base
        if base.tag == "attr" and base.base.tag == "self":
            vals = self.class_attr(base.base.cls, base.name)
        else:
            vals = self._made_by(base)
        if len(vals) < 2:
            return []
        refs: list = []
        for v in vals:
            got = res(v)
            held = (got.parts if got.kind == TUPLE else ()) if elements else (got,)
            for h in held:
                if h.kind in (MODEL, INST) and h.ref and h.ref not in refs:
                    refs.append(h.ref)
        out = []
        for ref in refs[1:]:
            fid = self.method(ref, callee.name)
            if fid is not None:
                out.append(("fn", fid, 0 if self._decorated(fid, "staticmethod") else 1))
        return out

    def _made_by(self, v: Val, depth: int = 0) -> list:
        """The values an object may be, branch by branch: the parts of a join, what a project
        function's branches return (`get_graph(config)` returns `Uniform(...)` or
        `Absorbing(...)`), what the callers of a parameter pass (a closure's `graph`)."""
        if depth > 3:
            return [v]
        if v.tag == "join":
            return [w for part in v.parts for w in self._made_by(part, depth + 1)]
        if isinstance(v, Param):
            return [w for passed in self.passed(v) for w in self._made_by(passed, depth + 1)]
        ref = None
        if v.tag in ("ret", "retof"):
            ref = v.ref
        elif v.tag == "meth" and v.base.tag == "sym":
            ref = f"{v.base.ref}.{v.name}"  # `graph_lib.get_graph(config)` (as `classify` spells it)
        sym = self.symbol(ref) if ref else None
        if sym is not None and sym[0] == "fn":
            mod, f = self.functions[sym[1]]
            ret = self.val(f["ret"], mod) if f["ret"] is not None else None
            if ret is not None and ret.tag == "join":
                return [w for part in ret.parts for w in self._made_by(part, depth + 1)]
        return [v]

    def _few_model_methods(self, callee: Val, resolve=None) -> tuple:
        """`model.run_train(...)` on a model of unknown class: the few project model classes'
        methods of that name (see ``model_methods``); not `self.gate(x)`, a submodule called, nor
        a method of `self` (its class and subclasses are known)."""
        if callee.tag != "attr" or callee.base.tag == "self":
            return ()
        fids = self.model_methods(callee.name)
        if fids and (resolve or self.resolve)(callee).kind == MODEL and self.model_attr(callee.name):
            return ()  # (`model.encoder(x)`: a submodule some project model holds, not its method)
        return fids

    def functions_passed(self, args: tuple, kwargs: dict) -> list:
        """The project functions among a call's arguments (`optimizer.step(closure)`)."""
        out = []
        for v in (*args, *kwargs.values()):
            if v is not None and v.tag in ("sym", "attr"):
                res = self.resolve(v)
                if res.kind == SYM and res.ref in self.functions:
                    out.append(res.ref)
        return out

    def is_property(self, fid: str) -> bool:
        """A method read as an attribute (`@property`, `@functools.cached_property`)."""
        return self._decorated(fid, "property") or self._decorated(fid, "cached_property")

    def _decorated(self, fid: str, name: str) -> bool:
        entry = self.functions.get(fid)
        return entry is not None and entry[1]["cls"] is not None and any(
            d.rsplit(".", 1)[-1] == name for d in entry[1]["decorators"])

def _params_in(j, fid: str) -> set:
    """The names of ``fid``'s parameters the summary value ``j`` (JSON) holds."""
    if not isinstance(j, list) or not j:
        return set()
    if j[0] == "param":
        return {j[2]} if j[1] == fid and len(j) > 2 else set()
    out = set()
    for x in j[1:]:
        if isinstance(x, list):
            out |= _params_in(x, fid)
    return out
