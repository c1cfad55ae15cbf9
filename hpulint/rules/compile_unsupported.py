"""Objects Dynamo does not trace, for HPU012: what a name or ``self.<attr>`` was built as.

Every entry was measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md has the
table): used inside a compiled region, each one is a graph break at its line, with the reason
Dynamo logs quoted in the message.

- ``nn.GRU``/``nn.LSTM``/``nn.RNN`` modules called ("Attempted to wrap RNN, GRU, or LSTM"; the
  cells ``nn.GRUCell``/``nn.LSTMCell`` are traced), also when a function of the file builds them;
- fake-quantize modules and observers of ``torch.ao.quantization`` called (``FakeQuantize``,
  ``MinMaxObserver``, ``MovingAverageMinMaxObserver``, ``HistogramObserver``...: "Attempted to
  inline function marked as skipped"; the functional ``torch.fake_quantize_per_tensor_affine`` is
  traced);
- ``threading.Lock``/``RLock``: ``with lock:`` ("Unsupported context manager"), ``acquire()``,
  ``release()`` ("Unsupported method call");
- a ``GradScaler``'s methods (``scale``, ``unscale_``, ``step``, ``update``, ``get_scale``:
  "marked as skipped"), and an optimizer's ``zero_grad``, ``state_dict``, ``load_state_dict``,
  ``add_param_group`` (``torch._disable_dynamo`` in torch's optimizer; ``model.zero_grad()`` is
  traced, and ``opt.step()`` is compiled as its own frame, not reported);
- ``gc.collect()``, ``gc.disable()``, ``gc.enable()``, ``gc.isenabled()`` ("marked as skipped");
- sparse tensors: ``torch.sparse.mm``/``addmm``/``sum``... of a tensor made outside the function,
  ``torch.sparse_coo_tensor``, ``.to_sparse()`` ("Attempted to wrap sparse Tensor"; dense
  arguments to ``torch.sparse.mm`` are traced);
- ``with torch.random.fork_rng():`` ("Unsupported context manager": Dynamo cannot resume inside
  the block, so the whole function runs eagerly: 0 graphs, and the calls in the block, a
  ``manual_seed`` among them, are not breaks of their own);
- packed sequences: ``torch.nn.utils.rnn.pack_padded_sequence``, ``pad_packed_sequence`` and
  ``pack_sequence`` ("Attempted to call function marked as skipped"; ``pad_sequence`` is traced);
- attribute reads on an instance of a ``dict`` subclass whose ``__getattr__`` is not a function
  (``__getattr__ = dict.__getitem__`` or ``dict.get``: "User-defined object with non-function
  __getattr__"; a ``def __getattr__`` is traced), at the first read in each function.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, param_names

RNN = frozenset({"torch.nn.GRU", "torch.nn.LSTM", "torch.nn.RNN", "torch.nn.modules.rnn.GRU",
                 "torch.nn.modules.rnn.LSTM", "torch.nn.modules.rnn.RNN"})
QUANT_PREFIXES = ("torch.ao.quantization.", "torch.quantization.")
LOCKS = frozenset({"threading.Lock", "threading.RLock"})
SCALERS = frozenset({"torch.amp.GradScaler", "torch.cuda.amp.GradScaler", "torch.cpu.amp.GradScaler",
                     "torch.amp.grad_scaler.GradScaler"})
SCALER_METHODS = frozenset({"scale", "unscale_", "step", "update", "get_scale"})
OPTIMIZER_METHODS = frozenset({"zero_grad", "state_dict", "load_state_dict", "add_param_group"})
GC = frozenset({"gc.collect", "gc.disable", "gc.enable", "gc.isenabled"})
SPARSE_OPS = frozenset({"torch.sparse.mm", "torch.sparse.addmm", "torch.sparse.sum", "torch.sparse.softmax",
                        "torch.sparse.log_softmax"})
SPARSE_MAKERS = frozenset({"torch.sparse_coo_tensor", "torch.sparse_csr_tensor", "torch.sparse_csc_tensor",
                           "torch.sparse_bsr_tensor", "torch.sparse_bsc_tensor", "torch.sparse_compressed_tensor"})
TO_SPARSE = frozenset({"to_sparse", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr",
                       "to_sparse_bsc"})

FORK_RNG = frozenset({"torch.random.fork_rng"})
PACKING = frozenset({"torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pad_packed_sequence",
                     "torch.nn.utils.rnn.pack_sequence"})
FORK_WHY = ("Dynamo does not support `torch.random.fork_rng()` as a context manager (\"Unsupported context "
            "manager\"): it cannot resume inside the block, so the whole function runs eagerly")
FIX_FORK = ("Fork and seed the RNG in the eager code around the compiled call (`with torch.random.fork_rng(): "
            "torch.manual_seed(s); out = compiled(x)`)")
PACK_WHY = ("Dynamo does not trace `{name}()` (packed sequences: \"Attempted to call function marked as "
            "skipped\")")
FIX_PACK = ("Keep the padded batch and mask it (`pad_sequence` and a length mask are traced), or pack and run "
            "the recurrent part in the eager code around the compiled parts")
RNN_WHY = "Dynamo does not trace `nn.{name}` modules (\"Attempted to wrap RNN, GRU, or LSTM\")"
FIX_RNN = ("Run the recurrent module in the eager code and compile the parts around it, or unroll it "
           "with `nn.GRUCell`/`nn.LSTMCell` (traced)")
QUANT_WHY = ("Dynamo does not trace `torch.ao.quantization` modules (the fake-quantize modules and "
             "observers: \"marked as skipped\")")
FIX_QUANT = ("Compile the model after QAT (convert it first), or quantize with the functional ops "
             "(`torch.fake_quantize_per_tensor_affine` with a fixed scale is traced)")
LOCK_WHY = "Dynamo does not support a `threading` lock in the compiled region (\"Unsupported {how}\")"
FIX_LOCK = "Take the lock in the eager code around the compiled call, and compile only the tensor math"
SCALER_WHY = "Dynamo does not trace `GradScaler` methods (torch.amp's grad scaler: \"marked as skipped\")"
FIX_SCALER = ("Compile the forward and loss only; call `scaler.scale(loss).backward()`, `scaler.step(opt)` "
              "and `scaler.update()` in the eager code around it")
OPT_WHY = ("Dynamo does not trace `Optimizer.{name}()` (torch's optimizer disables Dynamo for it: \"marked "
           "as skipped\")")
FIX_OPT = ("Call `opt.{name}()` in the eager code around the compiled function (`model.zero_grad()` is "
           "traced, if the gradients must be cleared inside)")
GC_WHY = "Dynamo does not trace `{name}()` (\"marked as skipped\")"
FIX_GC = "Collect in the eager code between compiled calls (in a compiled graph there is nothing to free)"
SPARSE_WHY = "Dynamo cannot put a sparse tensor in a graph (\"Attempted to wrap sparse Tensor\")"
FIX_SPARSE = ("Keep the sparse product in the eager code and compile the dense layers around it, or use "
              "a dense matrix (`adj.to_dense()` once, outside) when it is small")
ATTRDICT_WHY = ("Dynamo does not trace attribute reads on `{cls}`, whose `__getattr__` is not a function "
                "(\"User-defined object with non-function __getattr__\")")
FIX_ATTRDICT = ("Read the values into plain attributes or locals once, outside the compiled code (or index the "
                "dict: `cfg[\"dim\"]`), or give the class a `def __getattr__`")


class Built:
    """What names and ``self.<attr>`` were built as in the file (the qualname of the class called,
    or ``def:<name>`` for a function of the file), the functions of the file that mention an RNN
    class, and the dict subclasses whose ``__getattr__`` is not a function (with the names and
    constructor parameters that hold their instances). Filled while the file is walked; read
    after it (the deferred checks)."""

    def __init__(self) -> None:
        self.made: dict = {}  # (class name or None, name) -> set of qualnames / "def:f"
        self.rnn_defs: dict = {}  # function name -> RNN class names it mentions
        self.attrdicts: set = set()  # dict subclasses with a non-function __getattr__
        self.holders: dict = {}  # module-level name -> attrdict class its value is
        self.init_params: dict = {}  # (class name, attr) -> (index, name) of the __init__ parameter stored
        self.ctor_args: dict = {}  # class name -> [argument expressions of each instantiation]

    # --- while walking -------------------------------------------------------------------------

    def assign(self, an, node: cst.Assign) -> None:
        fn = an.function
        cls = fn.cls.name if fn.kind == "function" and fn.cls is not None else None
        value = node.value
        made = _made_by(an, value)
        for t in node.targets:
            tgt = t.target
            key = None
            if type(tgt) is cst.Name and fn.kind == "module":
                key = (None, tgt.value)
                root = _root_name(value)
                if type(value) is cst.Call and root in self.attrdicts:
                    self.holders[tgt.value] = root
            elif type(tgt) is cst.Attribute and type(tgt.value) is cst.Name and tgt.value.value == "self" \
                    and cls is not None:
                key = (cls, tgt.attr.value)
                if fn.name == "__init__" and type(value) is cst.Name:
                    params = param_names(fn.node)
                    if value.value in params:
                        self.init_params[key] = (params.index(value.value), value.value)
            if key is not None and made is not None:
                self.made.setdefault(key, set()).add(made)

    def class_def(self, node: cst.ClassDef) -> None:
        bases = {code(b.value).rsplit(".", 1)[-1] for b in node.bases}
        if not bases & {"dict", "OrderedDict", "Dict", "defaultdict"}:
            return
        for st in node.body.body:
            if type(st) is cst.SimpleStatementLine:
                for small in st.body:
                    if type(small) is cst.Assign and any(type(t.target) is cst.Name
                                                         and t.target.value == "__getattr__"
                                                         for t in small.targets):
                        self.attrdicts.add(node.name.value)

    def mention(self, an, node: cst.CSTNode) -> None:
        """A Name or Attribute that may spell an RNN class, inside a function of the file."""
        fn = an.function
        if fn.kind != "function":
            return
        qn = an.qualname(node) or ""
        if qn in RNN:
            self.rnn_defs.setdefault(fn.name, set()).add(qn.rsplit(".", 1)[1])

    def call(self, an, node: cst.Call) -> None:
        if type(node.func) is cst.Name:
            self.ctor_args.setdefault(node.func.value, []).append(node.args)

    # --- questions (after the walk) ---------------------------------------------------------------

    def built_as(self, fn, recv: cst.BaseExpression) -> set:
        """The qualnames (``def:f`` resolved to the RNN classes f mentions) ``recv``, read in the
        function scope ``fn``, was built as."""
        key = None
        if type(recv) is cst.Name:
            if fn.kind == "function" and recv.value in fn.params:
                return set()
            key = (None, recv.value)
        elif type(recv) is cst.Attribute and type(recv.value) is cst.Name and recv.value.value == "self" \
                and fn.kind == "function" and fn.cls is not None:
            key = (fn.cls.name, recv.attr.value)
        out = set()
        for m in self.made.get(key, ()) if key is not None else ():
            if m.startswith("def:"):
                out |= {f"torch.nn.{n}" for n in self.rnn_defs.get(m[4:], ())}
            else:
                out.add(m)
        return out

    def attrdict_of(self, fn, node: cst.BaseExpression) -> Optional[str]:
        """The attr-dict class the value of ``node`` is an instance of (a module-level holder, an
        attribute read of one, or ``self.<attr>`` stored from a constructor parameter that some
        instantiation fills with one), or None."""
        if type(node) is cst.Name:
            return self.holders.get(node.value)
        if type(node) is not cst.Attribute:
            return None
        inner = node.value
        if type(inner) is cst.Name and inner.value == "self":
            if fn.kind != "function" or fn.cls is None:
                return None
            param = self.init_params.get((fn.cls.name, node.attr.value))
            if param is None:
                return None
            index, name = param
            for args in self.ctor_args.get(fn.cls.name, ()):
                arg = _arg_at(args, index - 1, name)  # index 0 is self
                if arg is not None:
                    found = self.attrdict_of(fn, arg)
                    if found is not None:
                        return found
            return None
        return self.attrdict_of(fn, inner)  # an attribute of an attr-dict (a nested section)


def unsupported_call(an, built: Built, node: cst.Call) -> Optional[tuple]:
    """(what is said, why, fix, check) for a call of an object Dynamo does not trace, or None.
    ``check`` runs after the walk."""
    func = node.func
    fn = an.function
    qn = an.qualname(func) or ""
    if qn in GC:
        return f"`{qn}()`", GC_WHY.format(name=qn), FIX_GC, lambda: True
    if qn in PACKING:
        name = qn.rsplit(".", 1)[1]
        return f"`{name}(...)`", PACK_WHY.format(name=name), FIX_PACK, lambda: True
    if qn in SPARSE_MAKERS:
        return f"`{qn}(...)`", SPARSE_WHY, FIX_SPARSE, lambda: True
    if qn in SPARSE_OPS and node.args:
        first = node.args[0].value
        return f"`{qn}(...)` of a sparse tensor", SPARSE_WHY, FIX_SPARSE, lambda: not _made_here(fn, first)
    if type(func) is cst.Attribute:
        method = func.attr.value
        recv = func.value
        if method in TO_SPARSE:
            return f"`.{method}()`", SPARSE_WHY, FIX_SPARSE, lambda: True
        if method in ("acquire", "release"):
            return (f"`.{method}()` of a lock", LOCK_WHY.format(how="method call"), FIX_LOCK,
                    lambda: bool(built.built_as(fn, recv) & LOCKS))
        if method in SCALER_METHODS:
            return (f"`{code(func)}()`", SCALER_WHY, FIX_SCALER,
                    lambda: bool(built.built_as(fn, recv) & SCALERS))
        if method in OPTIMIZER_METHODS:
            v = an.value(recv)
            return (f"`{code(func)}()`", OPT_WHY.format(name=method), FIX_OPT.format(name=method),
                    lambda: an.kind(v) == "optimizer"
                    or any(q.startswith("torch.optim.") for q in built.built_as(fn, recv)))
    return None


def module_call(fn, built: Built, func: cst.BaseExpression):
    """(what is said, why, fix) for a call of a module Dynamo does not trace (an RNN, a
    fake-quantize module or an observer), after the walk; or None."""
    made = built.built_as(fn, func)
    for q in sorted(made):
        if q in RNN:
            name = q.rsplit(".", 1)[1]
            return f"a call of the `nn.{name}` `{code(func)}`", RNN_WHY.format(name=name), FIX_RNN
        if q.startswith(QUANT_PREFIXES):
            name = q.rsplit(".", 1)[1]
            return f"a call of the `{name}` `{code(func)}`", QUANT_WHY, FIX_QUANT
    return None


def fork_rng_with(an, item: cst.BaseExpression) -> bool:
    """`with torch.random.fork_rng(...):`."""
    return type(item) is cst.Call and (an.qualname(item.func) or "") in FORK_RNG


def lock_with(fn, built: Built, item: cst.BaseExpression) -> Optional[tuple]:
    """`with lock:` on a `threading` lock (after the walk)."""
    if bool(built.built_as(fn, item) & LOCKS):
        return f"`with {code(item)}:`", LOCK_WHY.format(how="context manager"), FIX_LOCK
    return None


def _made_by(an, value: cst.BaseExpression) -> Optional[str]:
    """The class or function of the file a value is built by: `nn.GRU(...)`, `make_memory(...)`,
    `threading.Lock()` (through `.to(...)`/`.eval()` chains)."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute \
            and value.func.attr.value in ("to", "eval", "train", "cuda", "cpu", "float", "half"):
        value = value.func.value
    if type(value) is not cst.Call:
        return None
    qn = an.qualname(value.func) or ""
    if type(value.func) is cst.Name and "." not in qn and qn == value.func.value:
        return f"def:{qn}" if qn[:1].islower() else qn
    return qn or None


def _root_name(node: cst.BaseExpression) -> Optional[str]:
    """`AttrDict(...)` or `AttrDict.from_nested(...)` -> AttrDict."""
    if type(node) is cst.Call:
        node = node.func
    while type(node) is cst.Attribute:
        node = node.value
    return node.value if type(node) is cst.Name else None


def _arg_at(args, index: int, name: str):
    for a in args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    positional = [a for a in args if a.keyword is None and not a.star]
    return positional[index].value if 0 <= index < len(positional) else None


def _made_here(fn, node: cst.BaseExpression) -> bool:
    """A name bound in the function itself (not a parameter): a tensor made in the region, dense
    unless made sparse (which is reported where it is made)."""
    return type(node) is cst.Name and fn.kind == "function" and node.value in fn.bindings \
        and node.value not in fn.params
