"""Questions about the project's classes (a mixin of :class:`hpulint.analysis.project.Project`):
their bases through any chain of project classes, whether one is a model or a framework's hook
class, the method a name resolves to and the overrides of it in subclasses, the values assigned
to an attribute, and the attributes a method counts across calls.
"""
from __future__ import annotations

from typing import Optional

from hpulint.analysis.names import MODEL_BASES, MODULE_BASES, MODULE_METHODS, is_housekeeping_name, is_model_class_name
from hpulint.analysis.values import INST, MODEL, UNKNOWN

# libraries whose classes named like models (`LlavaForConditionalGeneration`) are nn.Modules
_DECODING_HOOKS = frozenset({"StoppingCriteria", "LogitsProcessor", "LogitsWarper"})
_MODEL_LIBRARIES = ("transformers.", "diffusers.", "timm.", "optimum.")


class ClassQueries:
    """Reads ``classes``, ``functions`` and ``modules`` of the project it is mixed into, and its
    ``val``/``resolve``."""

    def mro(self, cid: str) -> list:
        """The class and its project base classes, depth first (a good enough MRO)."""
        hit = self._mro.get(cid)
        if hit is not None:
            return hit
        self._mro[cid] = [cid]
        out, seen, todo = [], set(), [cid]
        while todo:
            c = todo.pop(0)
            if c in seen or c not in self.classes:
                continue
            seen.add(c)
            out.append(c)
            mod, info = self.classes[c]
            for b in info["bases"]:
                s = self.symbol(self.absolute(b, mod))
                if s is not None and s[0] == "cls":
                    todo.append(s[1])
        self._mro[cid] = out
        return out

    def external_bases(self, cid: str) -> list:
        out = []
        for c in self.mro(cid):
            mod, info = self.classes[c]
            for b in info["bases"]:
                ab = self.absolute(b, mod)
                s = self.symbol(ab)
                if s is None or s[0] != "cls":
                    out.append(ab)
        return out

    def is_model_class(self, cid: str) -> bool:
        hit = self._models.get(cid)
        if hit is not None:
            return hit
        bases = self.external_bases(cid)
        model = any(b in MODULE_BASES or b in MODEL_BASES or (b.startswith("torch.nn.") and b.rsplit(".", 1)[-1][:1].isupper())
                    or b.endswith(("LightningModule", "PreTrainedModel", "ModelMixin", "ComposerModel"))
                    or (b.startswith(_MODEL_LIBRARIES) and is_model_class_name(b.rsplit(".", 1)[-1]))
                    for b in bases)
        if not model:
            # an unknown framework base (not a plain object) and a forward(): a model
            defines_forward = any("forward" in self.classes[c][1]["methods"] for c in self.mro(cid))
            framework = [b for b in bases if b not in ("object", "typing.Generic", "abc.ABC", "ABC", "Generic")
                         and not b.startswith(("typing.", "abc.", "enum.", "torch."))
                         and b.rsplit(".", 1)[-1] != "Function"]  # autograd.Function: ctx, not a module
            model = defines_forward and bool(framework)
        self._models[cid] = model
        return model

    def framework_kind(self, cid: str) -> Optional[str]:
        """"optimizer", "metric", "callback", "algorithm", "scheduler", "engine", "decoding", "trainer" or "lightning" when the class derives from one (a
        library's base, or the framework's own base class when the project is the framework)."""
        own = [f"{self.classes[c][0]}.{self.classes[c][1]['name']}" for c in self.mro(cid)[1:]]
        for b in [*self.external_bases(cid), *own]:
            leaf = b.rsplit(".", 1)[-1]
            if b.startswith("torch.optim") or leaf.endswith("Optimizer"):
                # `torch.optim.Optimizer`, or a framework's own optimizer base (DeepSpeed's
                # `DeepSpeedOptimizer`/`ZeROOptimizer`, fairseq's `FairseqOptimizer`)
                return "optimizer"
            if leaf == "Metric" or b.startswith("torchmetrics."):
                return "metric"
            if leaf.endswith("Callback") or leaf in ("TrainerCallback", "Callback"):
                return "callback"
            if b.startswith("composer") and leaf == "Algorithm":
                return "algorithm"
            if leaf == "SchedulerMixin" or (b.startswith(("diffusers.", "optimum.habana.diffusers."))
                                            and leaf.endswith("Scheduler")):  # a subclass of a library scheduler
                return "scheduler"
            if b.startswith("vllm.") and (leaf.endswith(("WorkerBase", "ModelRunnerBase", "ModelRunnerMixin"))
                                          or leaf in ("Worker", "GPUModelRunner")):
                return "engine"  # a vLLM worker or model runner (a platform plugin's)
            if b.startswith("text_generation_server.models") and leaf == "Model":
                return "engine"  # a text-generation-inference model (its server's Prefill/Decode)
            if leaf == "LightningModule" and b.startswith(("lightning.", "pytorch_lightning.")):
                return "lightning"
            if leaf.endswith("Trainer") and b.startswith(("transformers.", "trl.", "optimum.")):
                return "trainer"  # Hugging Face's Trainer, TRL's preference trainers, Gaudi's
            if leaf in _DECODING_HOOKS and b.startswith(("transformers.", "optimum.")):
                return "decoding"  # a stopping criterion or logits processor that generate() calls
        return None

    def step_flag(self, linked, cid: str, name: str) -> bool:
        """Is ``self.<name>`` (a logging flag by its name) set True, outside any logging interval,
        by a method that runs every step (`self.should_print = True` next to the optimizer step
        of `training_step()`, under the gradient-accumulation test only)? Then an `if` on it holds
        on every step."""
        for c in self.mro(cid):
            for flag, fid in self.classes[c][1].get("step_flags", ()):
                if flag == name and (linked.hot.get(fid) or linked.body_hot.get(fid)):
                    return True
        return False

    def counter_attr(self, cid: str, name: str) -> Optional[str]:
        """The attribute counted across calls behind ``self.<name>`` (itself, or the attribute
        a property of that name returns), when some method adds to it."""
        counters = set()
        bumped = self._bumped()
        for c in self.mro(cid):
            counters.update(self.classes[c][1].get("counter_attrs", ()))
            counters.update(bumped.get(c, ()))
        if name in counters:
            return name
        fid = self.method(cid, name)
        if fid is not None:
            f = self.functions[fid][1]
            ret = f.get("ret")
            if "property" in " ".join(f["decorators"]) and isinstance(ret, list) and ret[0] == "attr" \
                    and isinstance(ret[1], list) and ret[1][0] == "self" and ret[2] in counters:
                return ret[2]
        elif f"_{name}" in counters and any(b not in ("object", "builtins.object") for b in self.external_bases(cid)):
            # a property of a base outside the project (diffusers' `step_index`) over the counted
            # `_step_index`: the usual backing field
            return f"_{name}"
        return None

    def _bumped(self) -> dict:
        """cid -> the attributes functions of the project add to on its instances from outside
        (`inference_params.sequence_len_offset += n` in a decoding helper), never resetting them
        in the same function."""
        if self._bumped_attrs is None:
            self._bumped_attrs = {}
            for fid, (mod, f) in self.functions.items():
                for j, attrs, name in f.get("bumps", ()):
                    v = self.resolve(self.val(j, mod))
                    if v.kind in (INST, MODEL) and v.ref:
                        owners = [v.ref]
                    else:  # `inference_params` the analysis cannot follow: the class it is named after
                        owners = self.classes_named_like(name) if v.kind == UNKNOWN else []
                    for cid in owners:
                        self._bumped_attrs.setdefault(cid, set()).update(attrs)
        return self._bumped_attrs

    def classes_named_like(self, obj: str) -> list:
        """The project classes an object's name spells (`inference_params` -> `InferenceParams`)."""
        if self._by_stem is None:
            self._by_stem = {}
            for cid, (_, c) in self.classes.items():
                self._by_stem.setdefault(c["name"].lower(), []).append(cid)
        return self._by_stem.get(obj.replace("_", "").lower(), [])

    def model_methods(self, name: str) -> tuple:
        """The methods ``name`` of the project's model classes when at most three (twelve for a
        getter) define it (a wrapper's `run_train()`): a model whose class is not known that has
        it is most likely of one of those. Names every model has (`forward`, `generate`) have
        many, and give none."""
        index = self.__dict__.get("_model_methods")
        if index is None:
            index = {}
            for cid, (_, c) in self.classes.items():
                if self.is_model_class(cid):
                    for n, fid in c["methods"].items():
                        if not self.is_property(fid):
                            index.setdefault(n, []).append(fid)
            self._model_methods = index
        if name.startswith("__") or name in MODULE_METHODS or (
                is_housekeeping_name(name) and not name.startswith("get_")):
            # (`model.train()` is nn.Module's, whatever a project class overrides; a getter,
            # `get_inputs_embeds()`, may compute: it is the project's method, run as a function)
            return ()
        fids = index.get(name, ())
        # (a getter's name is specific to its interface, `get_inputs_embeds()` of each
        # vision-language model a server can load; `generate()` or `encode()` is everyone's)
        return tuple(fids) if len(fids) <= (12 if name.startswith("get_") else 3) else ()

    def plain_methods(self, name: str) -> bool:
        """Does a project class that is not a model define a method ``name``?"""
        index = self.__dict__.get("_plain_methods")
        if index is None:
            index = {n for cid, (_, c) in self.classes.items() if not self.is_model_class(cid) for n in c["methods"]}
            self._plain_methods = index
        return name in index

    def model_attr(self, name: str) -> bool:
        """Does a project model class assign ``self.<name>`` (a submodule or a value)?"""
        return any(name in c["attrs"] for cid, (_, c) in self.classes.items() if self.is_model_class(cid))

    def method(self, cid: str, name: str) -> Optional[str]:
        for c in self.mro(cid):
            fid = self.classes[c][1]["methods"].get(name)
            if fid:
                return fid
        return None

    def class_attr(self, cid: str, name: str) -> list:
        out = []
        for c in self.mro(cid):
            mod, info = self.classes[c]
            for j in info["attrs"].get(name, ()):
                out.append(self.val(j, mod))
        return out

    # --- calls -------------------------------------------------------------------------------

    def mixed_into_model(self, cid: str) -> bool:
        """A class some project model class derives from (a mixin such as a `GenerationMixin`):
        its `self` is, at run time, that model. So is a class whose functions some file installs
        on a model (`model._sample = types.MethodType(DreamGenerationMixin._sample, model)`)."""
        hit = self._mixins.get(cid)
        if hit is None:
            if self._subclass_map is None:
                self._subclass_map = self._subclasses()
            # (or a subclass of transformers' `GenerationMixin`, which is only ever mixed into a
            # model: a `sample()` override whose class is combined with a model class chosen at
            # run time, `class HF(getattr(transformers, arch), REPLUG_Generation)`)
            hit = any(self.is_model_class(sub) for sub in self._subclass_map.get(cid, ())) \
                or any(b.rsplit(".", 1)[-1] == "GenerationMixin" and b.startswith("transformers")
                       for b in self.external_bases(cid)) \
                or cid in self._installed_on_models()
            if hit or hasattr(self, "resolve"):
                self._mixins[cid] = hit
        return hit

    def _installed_on_models(self) -> set:
        if self._installed is not None:
            return self._installed
        # (asked while the callers are built, before values resolve across the project: a shallow
        # answer, not kept)
        res = getattr(self, "resolve", None) or self.shallow
        out = set()
        for mod, s in self.modules.items():
            for method, receiver in s.get("installed", ()):
                fid = res(self.val(method, mod)).ref
                if fid in self.functions and self.functions[fid][1]["cls"] is not None \
                        and res(self.val(receiver, mod)).kind == MODEL:
                    out.add(self.functions[fid][1]["cls"])
        if res is not self.shallow:
            self._installed = out
        return out

    def _overrides(self, cid: str, name: str, found: str) -> list:
        """`self.sampler_step(...)` in a base class runs whichever subclass's override the object
        is: the other methods of that name in the classes deriving from ``cid``."""
        if self._subclass_map is None:
            self._subclass_map = self._subclasses()
        out = []
        for sub in self._subclass_map.get(cid, ()):
            other = self.method(sub, name)
            if other is not None and other != found and ("fn", other, 1) not in out:
                out.append(("fn", other, 1))
        return out

    def _subclasses(self) -> dict:
        """cid -> the project classes that derive from it, through any chain."""
        out: dict = {}
        for cid in self.classes:
            for base in self.mro(cid)[1:]:
                out.setdefault(base, []).append(cid)
        return out
