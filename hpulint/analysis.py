"""Facts every rule needs, gathered during the engine's single walk of a file.

The engine calls the handlers of :func:`analysis_handlers` before any rule sees a node and after
every rule has left it, so a rule always reads the facts of the code around the node it is
looking at: the resolved name of a call (``htcore.mark_step`` ->
``habana_frameworks.torch.core.mark_step``), the enclosing function, class and loops, the loop
counters and the values derived from them, and whether a name probably holds a tensor.

Some facts are only known once the whole file has been read: whether a loop is a *step loop*
(it runs ``backward()``, an optimizer ``step()``, a step marker or a model, itself or through a
function of the same file it calls) and whether a function is *hot* (``forward`` of an
``nn.Module`` subclass, or called from a step loop or another hot function). Rules ask those
through :class:`Loop` and :class:`Scope` properties inside a deferred report, which the engine
evaluates after :meth:`Analysis.finish`.

No scope or qualified-name metadata from libcst: those cost several parses' worth of time. Our
import table and stacks cover what the rules need.
"""
from __future__ import annotations

import re
from typing import Iterator, Optional

import libcst as cst

# ---------------------------------------------------------------------------------------------
# Names

STEP_MARKERS = frozenset(
    {
        "habana_frameworks.torch.core.mark_step",
        "torch_xla.core.xla_model.mark_step",
        "torch_xla.sync",
        "torch._lazy.mark_step",
    }
)
MARKING_LOADERS = frozenset(
    {
        "torch_xla.distributed.parallel_loader.MpDeviceLoader",
        "torch_xla.distributed.parallel_loader.ParallelLoader",
    }
)
BOOL_RESULT_TORCH = frozenset({"equal", "allclose", "is_tensor", "is_floating_point", "is_complex",
                               "is_nonzero", "is_storage", "is_same_size", "numel", "typename"})
# torch.* callables that do not return a tensor.
NON_TENSOR_TORCH = BOOL_RESULT_TORCH | frozenset(
    {
        "device", "dtype", "Size", "Generator", "no_grad", "enable_grad", "inference_mode",
        "set_grad_enabled", "is_grad_enabled", "manual_seed", "seed", "initial_seed",
        "get_default_dtype", "set_default_dtype", "set_default_tensor_type", "compile",
        "set_printoptions", "get_rng_state", "set_rng_state", "use_deterministic_algorithms",
        "autocast", "is_inference_mode_enabled", "broadcast_shapes", "result_type",
        "promote_types", "can_cast", "finfo", "iinfo", "get_num_threads", "set_num_threads",
        "load", "save", "sym_int", "sym_float", "sym_max", "sym_min", "split", "chunk",
        "unbind", "meshgrid", "broadcast_tensors", "tensor_split", "hsplit", "vsplit",
        "dsplit", "sort", "topk", "max", "min", "unique", "nonzero", "where", "svd", "qr",
        "eig", "lu", "std_mean", "var_mean", "aminmax", "frexp", "histogram", "kthvalue",
        "median", "mode", "cummax", "cummin", "slogdet", "geqrf",
    }
)
TENSOR_NAMESPACES = ("torch.", "torch.nn.functional.", "torch.fft.", "torch.linalg.", "torch.special.")
NON_TENSOR_NAMESPACES = (
    "torch.cuda.", "torch.backends.", "torch.distributed.", "torch.jit.", "torch.fx.",
    "torch.utils.", "torch.autograd.", "torch.onnx.", "torch._C.", "torch.hub.", "torch.compiler.",
    "torch.library.", "torch.testing.", "torch.optim.", "torch.export.", "torch._dynamo.",
    "torch.overrides.", "torch.multiprocessing.", "torch.profiler.", "torch.ao.", "torch.nn.init.",
    "torch.nn.utils.", "torch.nn.modules.", "torch.hpu.", "torch.xpu.", "torch.mps.", "torch.cpu.",
    "torch.amp.", "torch.func.", "torch.sparse.", "torch.nested.", "torch._", "torch.ops.",
)
# Tensor methods whose result is not a tensor (or not one tensor).
NON_TENSOR_METHODS = frozenset(
    {
        "item", "tolist", "numpy", "size", "dim", "ndimension", "numel", "nelement", "stride",
        "data_ptr", "element_size", "storage", "untyped_storage", "storage_offset", "is_contiguous",
        "is_floating_point", "is_complex", "is_signed", "equal", "allclose", "type", "get_device",
        "register_hook", "backward", "split", "chunk", "unbind", "tensor_split", "max", "min",
        "sort", "topk", "unique", "nonzero", "svd", "qr", "kthvalue", "median", "mode", "aminmax",
        "cummax", "cummin", "items", "keys", "values", "get", "copy", "append", "extend", "pop",
        "format", "join", "startswith", "endswith", "dtype", "parameters", "named_parameters",
        "state_dict", "modules", "children", "train", "eval", "zero_grad", "apply",
    }
)
MASK_FUNCTIONS = frozenset(
    f"torch.{n}" for n in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "logical_and",
                           "logical_or", "logical_not", "logical_xor", "eq", "ne", "gt", "ge", "lt",
                           "le", "isin", "isclose", "signbit")
)
MASK_METHODS = frozenset({"bool", "eq", "ne", "gt", "ge", "lt", "le", "isnan", "isinf", "isfinite",
                          "logical_and", "logical_or", "logical_not", "isclose"})
HOST_FACTORIES = frozenset(
    f"torch.{n}" for n in ("zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange",
                           "linspace", "logspace", "eye", "tensor", "as_tensor", "from_numpy", "randperm")
)
TENSOR_ATTRIBUTES = frozenset({"data", "grad", "T", "mT", "H", "mH", "real", "imag"})

_MODEL_WORDS = (
    "model|net|network|encoder|decoder|generator|discriminator|unet|vae|transformer|backbone|"
    "policy|critic|actor|teacher|student|classifier"
)
_MODEL_NAME = re.compile(rf"^(?:([a-z0-9]+)_)?(?:{_MODEL_WORDS})\d*(?:_([a-z0-9]+))?$")
# `build_model(...)`, `load_model(...)`: functions that make or handle a model, not a model
_VERBS = frozenset(
    "build create make load get init compare run save export check prepare wrap copy clone "
    "freeze unfreeze convert quantize trace script compile fuse setup train eval evaluate test "
    "validate print log update register set reset to from is has apply call forward".split()
)


def is_model_name(name: str) -> bool:
    """``model``, ``net``, ``ddp_model``, ``model_engine``, ``encoder2``: names users give models."""
    m = _MODEL_NAME.match(name.lower())
    return bool(m) and m.group(1) not in _VERBS and m.group(2) not in _VERBS
OPTIMIZER_NAME = re.compile(r"(?:^|_)(?:opt|optim|optimizer|optimiser)s?(?:_\w+)?$|optimizer", re.I)
MODULE_CHAIN = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "half", "bfloat16", "double",
                          "requires_grad_", "share_memory"})
LOADER_NAME = re.compile(r"(?:^|_)(?:data)?loader$", re.I)
MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "nn.Module", "Module"})


def dotted(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


_EMPTY = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    """The source text of a node."""
    return _EMPTY.code_for_node(node)


def last_name(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def names_in(node: cst.CSTNode) -> Iterator[str]:
    """Every Name read in an expression (not attribute names, not keyword names)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            yield n.value
        elif isinstance(n, cst.Attribute):
            stack.append(n.value)
        elif isinstance(n, cst.Arg):
            stack.append(n.value)
        elif isinstance(n, (cst.Lambda, cst.SimpleString, cst.Integer, cst.Float)):
            continue
        elif isinstance(n, cst.CSTNode):
            for f in _EXPR_FIELDS.get(type(n)) or _expr_fields(type(n)):
                v = getattr(n, f)
                if isinstance(v, cst.CSTNode):
                    stack.append(v)
                elif isinstance(v, (list, tuple)):
                    stack.extend(c for c in v if isinstance(c, cst.CSTNode))


_EXPR_FIELDS: dict = {}
_SKIP_FIELD = re.compile(r"whitespace|^lpar$|^rpar$|comma|^operator$|^equal$|^dot$|^colon$|bracket|brace|^star$")


def _expr_fields(tp) -> tuple:
    import dataclasses

    fields = tuple(f.name for f in dataclasses.fields(tp) if not _SKIP_FIELD.search(f.name))
    _EXPR_FIELDS[tp] = fields
    return fields


# ---------------------------------------------------------------------------------------------
# Frames


class Facts:
    """What a loop body or a function body does directly (nested loops keep their own)."""

    __slots__ = ("backward", "opt_step", "markers", "model_calls", "calls", "carried")

    def __init__(self) -> None:
        self.backward: list = []  # Call nodes of x.backward()
        self.opt_step: list = []  # Call nodes of optimizer.step() / xm.optimizer_step(...)
        self.markers: list = []  # Call nodes of step markers
        self.model_calls: list = []  # Call nodes of model(...)
        self.calls: set = set()  # same-file function names called (resolved at finish)
        self.carried = False  # assigns a tensor name it also read before (x = f(x))


class Scope:
    """A module, class or function body."""

    def __init__(self, kind: str, node: cst.CSTNode, name: str, parent: Optional["Scope"],
                 cls: Optional["ClassInfo"] = None) -> None:
        self.kind = kind
        self.node = node
        self.name = name
        self.parent = parent
        self.cls = cls  # for methods: the class they belong to
        self.tensors: set = set()
        self.host: set = set()  # names holding host (CPU) tensors or NumPy arrays
        self.masks: set = set()  # names holding boolean tensors (comparisons, isnan, ...)
        self.data_scalars: set = set()  # Python numbers read from tensor data (.item(), int(t))
        self.not_tensors: set = set()
        self.facts = Facts()
        self.hot_reason: Optional[str] = None  # set by Analysis.finish
        self.stepping = False  # set by Analysis.finish: runs a step itself, outside any loop

    @property
    def is_forward(self) -> bool:
        return self.kind == "function" and self.name == "forward" and bool(self.cls and self.cls.is_module)

    @property
    def hot(self) -> bool:
        return self.hot_reason is not None


class ClassInfo:
    def __init__(self, node: cst.ClassDef, name: str, is_module: bool) -> None:
        self.node = node
        self.name = name
        self.is_module = is_module
        self.tensor_attrs: set = set()
        self.model_attrs: set = set()


class Loop:
    """A for/while loop and what its body does."""

    def __init__(self, node: cst.CSTNode, scope: Scope, parent: Optional["Loop"]) -> None:
        self.node = node
        self.scope = scope
        self.parent = parent  # enclosing loop in the same scope
        self.counters: set = set()  # loop counters and values derived from them
        self.facts = Facts()
        self.loader_marks = False  # iterates an MpDeviceLoader/ParallelLoader
        self.assigned: set = set()  # names assigned in the body
        self.read_before_assign: set = set()
        self.if_depth = 0  # how many `if`s enclosed the loop: the ones after are inside it
        self.iterated_params: list = []  # parameters of the function the loop iterates
        self.step_reason: Optional[str] = None  # set by Analysis.finish

    @property
    def is_step_loop(self) -> bool:
        return self.step_reason is not None

    def chain(self) -> Iterator["Loop"]:
        loop: Optional[Loop] = self
        while loop is not None:
            yield loop
            loop = loop.parent


# ---------------------------------------------------------------------------------------------


class Analysis:
    def __init__(self, target: str = "auto", extra_markers: tuple = ()) -> None:
        self.aliases: dict = {}
        self.configured_target = target
        self.detected_targets: set = set()
        self.extra_markers = frozenset(extra_markers)
        self.module_scope: Optional[Scope] = None
        self.scopes: list = []  # stack
        self.all_functions: list = []
        self.functions_by_name: dict = {}
        self.classes: dict = {}
        self.loops: list = []  # stack of Loop
        self.all_loops: list = []
        self.statements: list = []  # stack of statement nodes (simple and compound)
        self.marking_loader_names: set = set()  # names bound to an MpDeviceLoader/ParallelLoader
        self.loader_names: set = set()  # names bound to a DataLoader
        self.classes_by_name: dict = {}
        self.module_instances: set = set()  # names bound to an nn.Module instance
        self.call_order: dict = {}  # id(Call) -> its rank in source order
        self.call_statement: dict = {}  # id(Call) -> statement, for backward/step/marker calls
        self.calls_by_name: dict = {}  # simple callee name -> Call nodes (for argument facts)
        self.default_device_set = False  # torch.set_default_device(...) anywhere: no host factories
        self.if_branches: list = []  # (If, in_body) for the branches enclosing the current node
        self._branch_of: dict = {}  # id(If.body or If.orelse) -> (If, in_body)

    # --- public helpers for rules ------------------------------------------------------------

    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    @property
    def loop(self) -> Optional[Loop]:
        """The innermost loop in the current function (loops of outer functions don't count)."""
        if self.loops and self.loops[-1].scope is self.scope:
            return self.loops[-1]
        return None

    @property
    def statement(self) -> Optional[cst.CSTNode]:
        return self.statements[-1] if self.statements else None

    @property
    def target(self) -> Optional[str]:
        """'hpu', 'xla' or None: from the config, else from what the file imports and uses."""
        if self.configured_target in ("hpu", "xla"):
            return self.configured_target
        if "hpu" in self.detected_targets:
            return "hpu"
        if "xla" in self.detected_targets:
            return "xla"
        return None

    def local_name_for(self, target: str) -> Optional[str]:
        """How this file spells the module or function ``target``, through its imports.

        ``htcore`` for habana_frameworks.torch.core after ``import ... as htcore``;
        ``habana_frameworks.torch.core`` after a plain ``import habana_frameworks.torch.core``.
        """
        best = None
        for local, full in self.aliases.items():
            if target == full or target.startswith(full + "."):
                spelled = local + target[len(full):]
                if best is None or len(spelled) < len(best):
                    best = spelled
        return best

    def qualname(self, node: cst.BaseExpression) -> Optional[str]:
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        resolved = self.aliases.get(head, head)
        return f"{resolved}.{rest}" if rest else resolved

    def is_marker_call(self, call: cst.Call) -> bool:
        qn = self.qualname(call.func)
        if qn is None:
            return False
        if qn in STEP_MARKERS or qn in self.extra_markers:
            return True
        name = last_name(call.func)
        # any `<x>.mark_step()` (a wrapper, hpulint.lazy.device().mark_step()): the name is specific
        return name in self.extra_markers or name == "mark_step"

    def counter_in(self, expr: cst.CSTNode) -> Optional[str]:
        """The loop counter (or value derived from one) that ``expr`` reads, if any."""
        loop = self.loop
        if loop is None:
            return None
        counters = set()
        for lp in loop.chain():
            counters |= lp.counters
        if not counters:
            return None
        for n in names_in(expr):
            if n in counters:
                return n
        return None

    def counter_loop(self, name: str) -> Optional[Loop]:
        loop = self.loop
        for lp in loop.chain() if loop else ():
            if name in lp.counters:
                return lp
        return None

    def is_model_name(self, func: cst.BaseExpression) -> bool:
        if isinstance(func, cst.Name):
            name = func.value
            if name in self.module_instances:
                return True
            return is_model_name(name)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            attr = func.attr.value
            if func.value.value == "self":
                cls = self.current_class
                if cls is not None and attr in cls.model_attrs:
                    return True
            return is_model_name(attr)
        return False

    @property
    def current_class(self) -> Optional[ClassInfo]:
        for s in reversed(self.scopes):
            if s.kind == "class":
                return self.classes.get(id(s.node))
            if s.cls is not None:
                return s.cls
        return None

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        """True when the analysis knows ``node`` holds a tensor; False when unsure."""
        if isinstance(node, cst.Name):
            for s in reversed(self.scopes):
                if s.kind == "class":
                    continue
                if node.value in s.tensors:
                    return True
                if node.value in s.not_tensors:
                    return False
            return False
        if isinstance(node, cst.Attribute):
            if isinstance(node.value, cst.Name) and node.value.value == "self":
                cls = self.current_class
                return cls is not None and node.attr.value in cls.tensor_attrs
            if node.attr.value in TENSOR_ATTRIBUTES:
                return self.is_tensor(node.value)
            return False
        if isinstance(node, cst.Call):
            return self._call_is_tensor(node)
        if isinstance(node, cst.Subscript):
            return self.is_tensor(node.value)
        if isinstance(node, cst.BinaryOperation):
            return self.is_tensor(node.left) or self.is_tensor(node.right)
        if isinstance(node, cst.UnaryOperation):
            return not isinstance(node.operator, cst.Not) and self.is_tensor(node.expression)
        if isinstance(node, cst.Comparison):
            return (
                len(node.comparisons) == 1
                and not isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn))
                and (self.is_tensor(node.left) or self.is_tensor(node.comparisons[0].comparator))
            )
        return False

    def _name_in(self, attr: str, name: str) -> bool:
        for s in reversed(self.scopes):
            if s.kind == "class":
                continue
            if name in getattr(s, attr):
                return True
            if name in s.tensors or name in s.not_tensors:
                return False
        return False

    def is_mask(self, node: cst.BaseExpression) -> bool:
        """A boolean tensor: a comparison of a tensor, isnan/isinf/isfinite, logical ops, .bool()."""
        if isinstance(node, cst.Name):
            return self._name_in("masks", node.value)
        if isinstance(node, cst.Comparison):
            return self.is_tensor(node) and not self.is_host(node)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
            return self.is_mask(node.expression)
        if isinstance(node, cst.BinaryOperation) and isinstance(
                node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return self.is_mask(node.left) or self.is_mask(node.right)
        if isinstance(node, cst.Call):
            qn = self.qualname(node.func) or ""
            if qn in MASK_FUNCTIONS:
                return True
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in MASK_METHODS:
                return self.is_tensor(node.func.value) and not self.is_host(node.func.value)
        return False

    def is_data_scalar(self, node: cst.BaseExpression) -> bool:
        """A Python number read from tensor data: ``t.item()``, ``int(t)``, or arithmetic on one."""
        if isinstance(node, cst.Name):
            return self._name_in("data_scalars", node.value)
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "item" and not node.args:
                return not self.is_host(func.value)
            if isinstance(func, cst.Name) and func.value in ("int", "float") and len(node.args) == 1:
                arg = node.args[0].value
                return (self.is_tensor(arg) and not self.is_host(arg)) or self.is_data_scalar(arg)
            if isinstance(func, cst.Name) and func.value in ("max", "min", "abs", "round"):
                return any(self.is_data_scalar(a.value) for a in node.args)
            return False
        if isinstance(node, cst.BinaryOperation):
            return self.is_data_scalar(node.left) or self.is_data_scalar(node.right)
        if isinstance(node, cst.UnaryOperation):
            return self.is_data_scalar(node.expression)
        return False

    def is_host(self, node: cst.BaseExpression) -> bool:
        """True when ``node`` is known to live on the host: a NumPy array, a tensor made by a
        torch factory without ``device=`` (and no ``set_default_device`` in the file), or the
        result of ``.cpu()``/``.numpy()``. Indexing it or reading it is no device constant or sync.
        """
        if isinstance(node, cst.Name):
            for s in reversed(self.scopes):
                if s.kind == "class":
                    continue
                if node.value in s.host:
                    return True
                if node.value in s.tensors or node.value in s.not_tensors:
                    return False
            return False
        if isinstance(node, cst.Subscript):
            return self.is_host(node.value)
        if isinstance(node, (cst.BinaryOperation, cst.Comparison)):
            operands = (node.left, node.right) if isinstance(node, cst.BinaryOperation) else (
                node.left, *(c.comparator for c in node.comparisons))
            sides = [x for x in operands if self.is_tensor(x) or self.is_host(x)]
            return bool(sides) and all(self.is_host(x) for x in sides)
        if isinstance(node, cst.UnaryOperation):
            return self.is_host(node.expression)
        if not isinstance(node, cst.Call):
            return False
        func = node.func
        qn = self.qualname(func) or ""
        if qn.startswith("numpy."):
            return True
        if qn in HOST_FACTORIES and not self.default_device_set:
            return not any(a.keyword is not None and a.keyword.value == "device" for a in node.args)
        if isinstance(func, cst.Attribute):
            if func.attr.value in ("cpu", "numpy"):
                return True
            if func.attr.value in ("to", "cuda"):
                return False
            return self.is_host(func.value)
        return False

    def _call_is_tensor(self, node: cst.Call) -> bool:
        func = node.func
        qn = self.qualname(func)
        if qn is not None and qn.startswith("torch."):
            if qn == "torch.nn.Parameter" or qn == "torch.nn.parameter.Parameter":
                return True
            if any(qn.startswith(p) for p in NON_TENSOR_NAMESPACES):
                return False
            if any(qn.startswith(p) and "." not in qn[len(p):] for p in TENSOR_NAMESPACES):
                leaf = qn.rsplit(".", 1)[1]
                return leaf[:1].islower() and leaf not in NON_TENSOR_TORCH and not leaf.startswith("is_")
            return False
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            cls = self.current_class
            if cls is not None and func.attr.value in cls.model_attrs:
                return True  # self.fc(x): a submodule's output
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in ("to", "cuda", "contiguous", "clone", "detach", "float", "half",
                          "bfloat16", "double", "long", "int", "bool"):
                if method == "to" and isinstance(func.value, cst.Name) and self.is_model_name(func.value):
                    return False
                return method != "to" or self.is_tensor(func.value) or self._looks_like_batch(func.value)
            if method in NON_TENSOR_METHODS or method.startswith("is_"):
                return False
            return self.is_tensor(func.value)
        if self.is_model_name(func) and not self._inside_module_class():
            return True  # a module's output
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            cls = self.current_class
            return cls is not None and func.attr.value in cls.model_attrs
        return False

    def _looks_like_batch(self, node: cst.BaseExpression) -> bool:
        # x.to(device) on a plain name or item: a tensor moved to the device (models are
        # excluded by name above); a dict or list has no .to().
        return isinstance(node, (cst.Name, cst.Subscript))

    def _inside_module_class(self) -> bool:
        cls = self.current_class
        return cls is not None and cls.is_module

    # --- bookkeeping -------------------------------------------------------------------------

    # module
    def _enter_module(self, node: cst.Module) -> None:
        self.module_scope = Scope("module", node, "<module>", None)
        self.scopes.append(self.module_scope)

    def _leave_module(self, node: cst.Module) -> None:
        self.scopes.pop()

    # imports
    def _enter_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name)
            if full is None:
                continue
            self._note_target(full)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.aliases[alias.asname.name.value] = full
            else:
                head = full.split(".", 1)[0]
                self.aliases[head] = head

    def _enter_import_from(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            return
        base = dotted(node.module)
        if base is None:
            return
        self._note_target(base)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = dotted(alias.name)
            if name is None:
                continue
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
            self.aliases[local] = f"{base}.{name}"
            self._note_target(f"{base}.{name}")

    def _note_target(self, module: str) -> None:
        if module.startswith("habana_frameworks"):
            self.detected_targets.add("hpu")
        elif module.startswith("torch_xla"):
            self.detected_targets.add("xla")

    def _enter_string(self, node: cst.SimpleString) -> None:
        value = node.value.strip("'\"")
        if value in ("hpu", "xla") or value.startswith(("hpu:", "xla:")):
            self.detected_targets.add(value[:3])

    # classes and functions
    def _enter_class(self, node: cst.ClassDef) -> None:
        is_module = False
        for base in node.bases:
            qn = self.qualname(base.value)
            if qn is None:
                continue
            if qn in MODULE_BASES or qn.endswith(".Module") and qn.startswith("torch"):
                is_module = True
            else:
                leaf = qn.rsplit(".", 1)[-1]
                known = self.classes_by_name.get(leaf)
                if known is not None and known.is_module:
                    is_module = True
                elif qn.startswith("torch.nn.") and leaf[:1].isupper():
                    is_module = True
        info = ClassInfo(node, node.name.value, is_module)
        self.classes[id(node)] = info
        self.classes_by_name[info.name] = info
        self.scopes.append(Scope("class", node, node.name.value, self.scope))
        self.statements.append(node)

    def _leave_class(self, node: cst.ClassDef) -> None:
        self.scopes.pop()
        self.statements.pop()

    def _enter_function(self, node: cst.FunctionDef) -> None:
        parent = self.scope
        cls = self.classes.get(id(parent.node)) if parent.kind == "class" else None
        scope = Scope("function", node, node.name.value, parent, cls)
        params = node.params
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            if p.annotation is not None and _is_tensor_annotation(self, p.annotation.annotation):
                scope.tensors.add(p.name.value)
        self.scopes.append(scope)
        self.all_functions.append(scope)
        self.functions_by_name.setdefault(node.name.value, []).append(scope)
        self.statements.append(node)

    def _leave_function(self, node: cst.FunctionDef) -> None:
        self.scopes.pop()
        self.statements.pop()

    def _enter_lambda(self, node: cst.Lambda) -> None:
        # A lambda's body runs later: treat it as a scope of its own.
        scope = Scope("function", node, "<lambda>", self.scope)
        self.scopes.append(scope)

    def _leave_lambda(self, node: cst.Lambda) -> None:
        self.scopes.pop()

    # statements
    def _enter_statement(self, node: cst.CSTNode) -> None:
        self.statements.append(node)

    def _leave_statement(self, node: cst.CSTNode) -> None:
        self.statements.pop()

    def _enter_if(self, node: cst.If) -> None:
        self._enter_branch(node)
        self.statements.append(node)
        self._branch_of[id(node.body)] = (node, True)
        if node.orelse is not None:
            self._branch_of[id(node.orelse)] = (node, False)

    def _leave_if(self, node: cst.If) -> None:
        self.statements.pop()
        self._leave_branch(node)

    def _enter_branch(self, node: cst.CSTNode) -> None:
        branch = self._branch_of.get(id(node))
        if branch is not None:
            self.if_branches.append(branch)

    def _leave_branch(self, node: cst.CSTNode) -> None:
        if id(node) in self._branch_of:
            self.if_branches.pop()

    # loops
    def _enter_for(self, node: cst.For) -> None:
        self.statements.append(node)
        loop = Loop(node, self.scope, self.loop)
        loop.if_depth = len(self.if_branches)
        loop.counters = _counters_of_for(self, node)
        loop.assigned.update(_target_names(node.target))
        it = node.iter
        loop.loader_marks = self._is_marking_loader(it)
        params = _param_names(self.scope.node) if self.scope.kind == "function" else []
        loop.iterated_params = [p for p in names_in(it) if p in params]
        # `for row in t:` over a tensor yields tensors, and so does a data loader (its batches:
        # `for i, (data, target) in enumerate(train_loader)`); anything else: unknown.
        tensor_items = self.is_tensor(it) or self._iterates_loader(it)
        for n in _target_names(node.target):
            if n in loop.counters:
                continue
            (self.scope.tensors.add if tensor_items else self.scope.tensors.discard)(n)
        self.loops.append(loop)
        self.all_loops.append(loop)

    def _enter_while(self, node: cst.While) -> None:
        self.statements.append(node)
        loop = Loop(node, self.scope, self.loop)
        loop.if_depth = len(self.if_branches)
        loop.counters = _counters_of_while(node)
        self.loops.append(loop)
        self.all_loops.append(loop)

    def _is_marking_loader(self, it: cst.BaseExpression) -> bool:
        """An MpDeviceLoader/ParallelLoader (which marks a step per batch), possibly inside
        enumerate(), tqdm() or zip(), or a name bound to one."""
        stack = [it]
        while stack:
            n = stack.pop()
            if isinstance(n, cst.Name) and n.value in self.marking_loader_names:
                return True
            if isinstance(n, cst.Call):
                if self.qualname(n.func) in MARKING_LOADERS:
                    return True
                if isinstance(n.func, cst.Attribute) and n.func.attr.value == "per_device_loader":
                    return self._is_marking_loader(n.func.value)
                stack.extend(a.value for a in n.args)
        return False

    def _iterates_loader(self, it: cst.BaseExpression) -> bool:
        """A loop over a DataLoader: a name bound to one, or named like one (``train_loader``)."""
        for call in [it] if not isinstance(it, cst.Call) else [it, *(a.value for a in it.args)]:
            if isinstance(call, cst.Call):
                qn = self.qualname(call.func) or ""
                if qn.endswith("DataLoader") or qn in MARKING_LOADERS:
                    return True
            name = last_name(call) if isinstance(call, (cst.Name, cst.Attribute)) else None
            if name is not None and (name in self.loader_names or LOADER_NAME.search(name)):
                return True
        return False

    def _leave_loop(self, node: cst.CSTNode) -> None:
        self.statements.pop()
        loop = self.loops.pop()
        loop.facts.carried = bool(loop.assigned & loop.read_before_assign & self.scope.tensors)

    # assignments
    def _enter_assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._assign(t.target, node.value)

    def _enter_ann_assign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assign(node.target, node.value)
        elif _is_tensor_annotation(self, node.annotation.annotation) and isinstance(node.target, cst.Name):
            self.scope.tensors.add(node.target.value)

    def _enter_aug_assign(self, node: cst.AugAssign) -> None:
        loop = self.loop
        if isinstance(node.target, cst.Name) and loop is not None:
            name = node.target.value
            if name not in loop.assigned:
                loop.read_before_assign.add(name)
            loop.assigned.add(name)

    def _enter_named_expr(self, node: cst.NamedExpr) -> None:
        self._assign(node.target, node.value)

    def _assign(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        # Tuple unpacking element by element: `data, target = data.to(d), target.to(d)`.
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) \
                and len(target.elements) == len(value.elements):
            for te, ve in zip(target.elements, value.elements):
                self._assign(te.value, ve.value)
            return
        scope = self.scope
        loop = self.loop
        if isinstance(target, cst.Name):
            name = target.value
            tensor = self.is_tensor(value)
            if tensor:
                scope.tensors.add(name)
                scope.not_tensors.discard(name)
            else:
                scope.tensors.discard(name)
                scope.not_tensors.add(name)
            (scope.host.add if self.is_host(value) else scope.host.discard)(name)
            (scope.masks.add if self.is_mask(value) else scope.masks.discard)(name)
            (scope.data_scalars.add if self.is_data_scalar(value) else scope.data_scalars.discard)(name)
            if isinstance(value, cst.Call):
                qn = self.qualname(value.func)
                if qn in MARKING_LOADERS:
                    self.marking_loader_names.add(name)
                if qn and (qn.endswith("DataLoader") or qn in MARKING_LOADERS):
                    self.loader_names.add(name)
                elif self._constructs_module(value):
                    self.module_instances.add(name)
            if loop is not None:
                if name not in loop.assigned and name in set(names_in(value)):
                    loop.read_before_assign.add(name)  # x = f(x): carried from the last pass
                loop.assigned.add(name)
                # values derived from a loop counter are counters too: j = i + 1, n - i
                if not tensor and self.counter_in(value) and _is_int_arith(value):
                    loop.counters.add(name)
                else:
                    for lp in loop.chain():
                        lp.counters.discard(name)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                and target.value.value == "self":
            cls = self.current_class
            if cls is not None:
                if self.is_tensor(value):
                    cls.tensor_attrs.add(target.attr.value)
                elif isinstance(value, cst.Call) and self._constructs_module(value):
                    cls.model_attrs.add(target.attr.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                if isinstance(el.value, cst.Name):
                    scope.tensors.discard(el.value.value)
                    if loop is not None:
                        loop.assigned.add(el.value.value)
                        for lp in loop.chain():
                            lp.counters.discard(el.value.value)

    def _constructs_module(self, call: cst.Call) -> bool:
        # nn.Linear(16, 8).to(device), Net().cuda().eval(): look through the chained calls
        while isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call) \
                and call.func.attr.value in MODULE_CHAIN:
            call = call.func.value
        qn = self.qualname(call.func)
        if qn is None:
            return False
        leaf = qn.rsplit(".", 1)[-1]
        known = self.classes_by_name.get(leaf)
        if known is not None:
            return known.is_module
        return qn.startswith("torch.nn.") and leaf[:1].isupper() and leaf != "Parameter"

    # calls: the facts that make a loop a step loop
    def _enter_call(self, node: cst.Call) -> None:
        self.call_order[id(node)] = len(self.call_order)
        facts = self.loop.facts if self.loop is not None else self.scope.facts
        func = node.func
        name = last_name(func)
        if self.is_marker_call(node):
            facts.markers.append(node)
            self.call_statement[id(node)] = self.statement
            return
        qn = self.qualname(func)
        if qn == "torch_xla.core.xla_model.optimizer_step":
            facts.opt_step.append(node)
            self.call_statement[id(node)] = self.statement
            if any(a.keyword is not None and a.keyword.value == "barrier" and isinstance(a.value, cst.Name)
                   and a.value.value == "True" for a in node.args):
                facts.markers.append(node)  # barrier=True marks the step (PyTorch/XLA docs)
            return
        if qn == "torch.set_default_device":
            self.default_device_set = True
        if isinstance(func, cst.Attribute):
            if name == "backward":
                facts.backward.append(node)
                self.call_statement[id(node)] = self.statement
                return
            if name == "step" and _receiver_is_optimizer(func.value):
                facts.opt_step.append(node)
                self.call_statement[id(node)] = self.statement
                return
            if name == "register_buffer" and len(node.args) >= 2 and isinstance(func.value, cst.Name) \
                    and func.value.value == "self":
                first = node.args[0].value
                cls = self.current_class
                if isinstance(first, cst.SimpleString) and cls is not None:
                    cls.tensor_attrs.add(first.value.strip("'\""))
            if isinstance(func.value, cst.Name) and func.value.value == "self":
                facts.calls.add(("self", name))
        elif isinstance(func, cst.Name):
            facts.calls.add(("", name))
            self.calls_by_name.setdefault(name, []).append(node)
        if self.is_model_name(func) and not self._inside_module_class():
            facts.model_calls.append(node)

    def _enter_name(self, node: cst.Name) -> None:
        loop = self.loop
        if loop is not None and node.value not in loop.assigned:
            loop.read_before_assign.add(node.value)

    # --- after the walk ----------------------------------------------------------------------

    def finish(self) -> None:
        """Resolve the facts that need the whole file: step loops and hot functions."""
        for loop in self.all_loops:
            # def train_loop_fn(loader): for ... in loader  /  train_loop_fn(pl.MpDeviceLoader(...))
            if not loop.loader_marks and loop.iterated_params and loop.scope.kind == "function":
                params = _param_names(loop.scope.node)
                for call in self.calls_by_name.get(loop.scope.name, ()):
                    for i, arg in enumerate(call.args):
                        name = arg.keyword.value if arg.keyword else (params[i] if i < len(params) else None)
                        if name in loop.iterated_params and self._is_marking_loader(arg.value):
                            loop.loader_marks = True
        for fn in self.all_functions:
            # a function that runs backward(), an optimizer step or a marker outside any loop
            # is a step (train_step); one that merely calls a model is not
            f = fn.facts
            fn.stepping = bool(f.backward or f.opt_step or f.markers)
        # A function that calls a stepping function (outside loops) steps too, transitively.
        changed = True
        while changed:
            changed = False
            for fn in self.all_functions:
                if not fn.stepping and any(c.stepping for c in self.callees(fn, fn.facts.calls)):
                    fn.stepping = changed = True
        for loop in self.all_loops:
            f = loop.facts
            if f.backward:
                loop.step_reason = "runs backward()"
            elif f.opt_step:
                loop.step_reason = "runs an optimizer step()"
            elif f.markers or loop.loader_marks:
                loop.step_reason = "marks a step"
            elif f.model_calls:
                loop.step_reason = "calls a model"
            else:
                callee = next((c for c in self.callees(loop.scope, f.calls) if c.stepping), None)
                if callee is not None:
                    loop.step_reason = f"calls {callee.name}(), which runs a step"
        for fn in self.all_functions:
            if fn.is_forward:
                fn.hot_reason = "forward() of an nn.Module"
        for loop in self.all_loops:
            if loop.is_step_loop:
                for callee in self.callees(loop.scope, loop.facts.calls):
                    if callee.hot_reason is None:
                        callee.hot_reason = "called from a step loop"
        changed = True
        while changed:
            changed = False
            for fn in self.all_functions:
                if fn.hot_reason is None:
                    continue
                calls = set(fn.facts.calls)
                for lp in self.all_loops:
                    if lp.scope is fn:
                        calls |= lp.facts.calls
                for callee in self.callees(fn, calls):
                    if callee.hot_reason is None and callee is not fn:
                        callee.hot_reason = f"called from {fn.name}()"
                        changed = True

    def callees(self, caller: Scope, calls: set) -> list:
        out = []
        for kind, name in calls:
            for fn in self.functions_by_name.get(name, ()):
                if kind == "self":
                    if fn.cls is not None and caller.cls is not None and fn.cls is caller.cls:
                        out.append(fn)
                elif fn.cls is None:
                    out.append(fn)
        return out

    def closure(self, functions: list) -> list:
        """``functions`` and every same-file function they call, transitively."""
        seen, out, todo = set(), [], list(functions)
        while todo:
            fn = todo.pop()
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            out.append(fn)
            calls = set(fn.facts.calls)
            for lp in self.all_loops:
                if lp.scope is fn:
                    calls |= lp.facts.calls
            todo.extend(self.callees(fn, calls))
        return out

    def under_log_guard(self) -> bool:
        """Inside the body (not the else) of `if step % log_every == 0:` (or `if i == 0:`, or
        `if not step % k:`) within the innermost loop: code that runs on a few steps only."""
        loop = self.loop
        branches = self.if_branches[loop.if_depth:] if loop is not None else self.if_branches
        counters = set()
        for lp in (loop.chain() if loop is not None else ()):
            counters |= lp.counters
        return any(in_body and _is_interval_test(node.test, counters) for node, in_body in branches)

    def is_interval_test(self, test: cst.BaseExpression) -> bool:
        """`step % k == 0` and the like, with this point's loop counters."""
        counters = set()
        for lp in (self.loop.chain() if self.loop is not None else ()):
            counters |= lp.counters
        return _is_interval_test(test, counters)

    def hot_context(self):
        """A zero-argument callable telling, after finish(), why this point runs every step.

        The innermost step loop around the node wins; else the enclosing function if it is hot
        (a loop inside forward() runs every step too, but once per step, unrolled into one graph).
        """
        loops = list(self.loop.chain()) if self.loop is not None else []
        funcs = [s for s in reversed(self.scopes) if s.kind == "function"]

        def why() -> Optional[str]:
            for lp in loops:
                if lp.is_step_loop:
                    return f"in a step loop (it {lp.step_reason})"
            for fn in funcs[:1]:
                if fn.hot:
                    return f"in {fn.name}() ({fn.hot_reason})"
            return None

        return why



# ---------------------------------------------------------------------------------------------
# Small pure helpers


def _is_tensor_annotation(an: Analysis, ann: cst.BaseExpression) -> bool:
    if isinstance(ann, cst.Subscript):  # Optional[Tensor], Union[Tensor, None]; not list[Tensor]
        if (an.qualname(ann.value) or "").rsplit(".", 1)[-1] not in ("Optional", "Union"):
            return False
        return any(
            isinstance(el.slice, cst.Index) and _is_tensor_annotation(an, el.slice.value) for el in ann.slice
        )
    if isinstance(ann, cst.BinaryOperation):  # Tensor | None
        return _is_tensor_annotation(an, ann.left) or _is_tensor_annotation(an, ann.right)
    if isinstance(ann, cst.SimpleString):
        return ann.value.strip("'\"") in ("Tensor", "torch.Tensor")
    qn = an.qualname(ann)
    return qn in ("torch.Tensor", "Tensor", "torch.nn.Parameter")


def _target_names(target: cst.BaseExpression) -> list:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        out = []
        for el in target.elements:
            out.extend(_target_names(el.value))
        return out
    return []


_RANGE_LIKE = frozenset({"range", "trange", "tqdm.trange", "tqdm.auto.trange", "tqdm.tqdm.trange"})
_WRAPPERS = frozenset({"tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "reversed", "list", "iter"})


def _counters_of_for(an: Analysis, node: cst.For) -> set:
    """Names in a for target that take a new int value each pass: range/enumerate counters."""
    return set(_counters(an, node.target, node.iter))


def _counters(an: Analysis, target: cst.BaseExpression, it: cst.BaseExpression) -> list:
    if not isinstance(it, cst.Call):
        return []
    qn = an.qualname(it.func) or ""
    if qn in _RANGE_LIKE:
        return _target_names(target) if isinstance(target, cst.Name) else []
    if qn in _WRAPPERS and it.args:
        return _counters(an, target, it.args[0].value)
    if qn == "enumerate" and isinstance(target, (cst.Tuple, cst.List)) and target.elements:
        first = target.elements[0].value
        return [first.value] if isinstance(first, cst.Name) else []
    if qn == "zip" and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == len(it.args):
        out = []
        for el, arg in zip(target.elements, it.args):
            out.extend(_counters(an, el.value, arg.value))
        return out
    return []


def _counters_of_while(node: cst.While) -> set:
    """Names a while loop changes by a step each pass: ``i += 1``, ``i = i + 1``."""
    out = set()
    stack = [node.body]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name) \
                and isinstance(n.operator, (cst.AddAssign, cst.SubtractAssign)):
            out.add(n.target.value)
        elif isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name) \
                and isinstance(n.value, cst.BinaryOperation) \
                and isinstance(n.value.operator, (cst.Add, cst.Subtract)):
            name = n.targets[0].target.value
            if name in set(names_in(n.value)):
                out.add(name)
        if isinstance(n, (cst.IndentedBlock, cst.SimpleStatementLine, cst.If, cst.Else, cst.With,
                          cst.Try, cst.For, cst.While, cst.SimpleStatementSuite)):
            for f in ("body", "orelse", "handlers", "finalbody"):
                v = getattr(n, f, None)
                if isinstance(v, cst.CSTNode):
                    stack.append(v)
                elif isinstance(v, (list, tuple)):
                    stack.extend(v)
        elif isinstance(n, cst.ExceptHandler):
            stack.append(n.body)
    return out


def _is_int_arith(node: cst.BaseExpression) -> bool:
    """An expression that plausibly stays a Python int: arithmetic, min/max/int/abs/len."""
    if isinstance(node, (cst.Name, cst.Integer)):
        return True
    if isinstance(node, cst.BinaryOperation):
        return _is_int_arith(node.left) and _is_int_arith(node.right)
    if isinstance(node, cst.UnaryOperation):
        return _is_int_arith(node.expression)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) \
            and node.func.value in ("min", "max", "int", "abs", "round", "len"):
        return all(_is_int_arith(a.value) for a in node.args)
    if isinstance(node, cst.Attribute):
        return True  # args.batch_size, self.n
    return False


def _receiver_is_optimizer(node: cst.BaseExpression) -> bool:
    name = last_name(node)
    if name is None:
        return False
    return bool(OPTIMIZER_NAME.search(name)) or name in ("scaler",)


_ENTER = {
    cst.Module: Analysis._enter_module,
    cst.Import: Analysis._enter_import,
    cst.ImportFrom: Analysis._enter_import_from,
    cst.SimpleString: Analysis._enter_string,
    cst.ClassDef: Analysis._enter_class,
    cst.FunctionDef: Analysis._enter_function,
    cst.Lambda: Analysis._enter_lambda,
    cst.SimpleStatementLine: Analysis._enter_statement,
    cst.With: Analysis._enter_statement,
    cst.Try: Analysis._enter_statement,
    cst.If: Analysis._enter_if,
    cst.IndentedBlock: Analysis._enter_branch,
    cst.SimpleStatementSuite: Analysis._enter_branch,
    cst.Else: Analysis._enter_branch,
    cst.For: Analysis._enter_for,
    cst.While: Analysis._enter_while,
    cst.Assign: Analysis._enter_assign,
    cst.AnnAssign: Analysis._enter_ann_assign,
    cst.AugAssign: Analysis._enter_aug_assign,
    cst.NamedExpr: Analysis._enter_named_expr,
    cst.Call: Analysis._enter_call,
    cst.Name: Analysis._enter_name,
}
_LEAVE = {
    cst.Module: Analysis._leave_module,
    cst.ClassDef: Analysis._leave_class,
    cst.FunctionDef: Analysis._leave_function,
    cst.Lambda: Analysis._leave_lambda,
    cst.SimpleStatementLine: Analysis._leave_statement,
    cst.With: Analysis._leave_statement,
    cst.Try: Analysis._leave_statement,
    cst.If: Analysis._leave_if,
    cst.IndentedBlock: Analysis._leave_branch,
    cst.SimpleStatementSuite: Analysis._leave_branch,
    cst.Else: Analysis._leave_branch,
    cst.For: Analysis._leave_loop,
    cst.While: Analysis._leave_loop,
}


def _has_modulo(node: cst.CSTNode) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.BinaryOperation):
            if isinstance(n.operator, cst.Modulo):
                return True
            stack += (n.left, n.right)
    return False


def _is_interval_test(test: cst.BaseExpression, counters: set) -> bool:
    """True for tests that hold on few steps: `x % k == 0`, `not x % k`, `i == 0`, and `and` of one."""
    if isinstance(test, cst.Comparison):
        if len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.Equal):
            return False
        sides = (test.left, test.comparisons[0].comparator)
        return any(_has_modulo(x) for x in sides) or bool(counters & set(names_in(test)))
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _has_modulo(test.expression)
    if isinstance(test, cst.BooleanOperation):
        left = _is_interval_test(test.left, counters)
        right = _is_interval_test(test.right, counters)
        return (left or right) if isinstance(test.operator, cst.And) else (left and right)
    return False


def _param_names(fn: cst.CSTNode) -> list:
    if not isinstance(fn, (cst.FunctionDef, cst.Lambda)):
        return []
    p = fn.params
    return [x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)]


def analysis_handlers() -> tuple:
    """(enter, leave): node type -> the Analysis method to call with (analysis, node).

    The engine calls these straight from its walk, before any rule sees a node (enter) and after
    every rule has left it (leave)."""
    return _ENTER, _LEAVE
