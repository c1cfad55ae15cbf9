"""The records the walk fills in: scopes (module, class, function), classes, loops, blocks.

Each function scope and loop keeps the *local* facts of its own body (calls, backward(),
optimizer steps, markers, returns); whether a loop is a step loop or a function is hot is decided
by the project link step from every file's facts, and read back through ``Analysis.facts``.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst


class CallSite:
    """A call the walk saw: what is called (a value), where, with what arguments."""

    __slots__ = ("node", "callee", "loop", "args", "kwargs", "tainted", "deferred", "name", "index", "guards",
                 "before", "fed", "optional")

    def __init__(self, node: cst.Call, callee, loop: int, args: tuple, kwargs: dict, tainted: dict,
                 deferred: bool, name: str = "") -> None:
        self.name = name  # the callee's name as written (`model` in `model(x)`, `decode` in `vae.decode(z)`)
        self.index = -1  # its position among the calls of its function (the summary's order)
        self.node = node
        self.callee = callee  # Val of the callee (`f`, `obj.method`)
        self.loop = loop  # index of the innermost loop of the function holding it, -1: none
        self.args = args  # positional argument values (None for *args)
        self.kwargs = kwargs  # keyword -> value
        # argument position (int) or keyword (str) -> the counter it carries: the name of a
        # loop counter of this function ("i") or "param:<name>" for a parameter that carries one
        self.tainted = tainted
        self.deferred = deferred  # the callee runs its function arguments later (add_step_closure)
        # ids of the logging-interval / run-once `if`s of its function it is under (an `if` that
        # turns out to wrap an optimizer step is dropped when the summary is written)
        self.guards: tuple = ()
        self.before = 0  # how many loops of its function start before it (source order)
        # argument positions (int) and keywords (str) whose name the call's result is assigned back
        # to (`ids, logits = update(ids, ...)`): the callee's returned value comes back next call
        self.fed: list = []
        # parameters of its function that must be given for it to run (`if top_k is not None:`
        # around it, `top_k=None` by default)
        self.optional: tuple = ()


class Facts:
    """What a loop body or a function body does directly (nested loops keep their own)."""

    __slots__ = ("backward", "opt_step", "markers", "dead_markers", "model_calls", "calls", "carried", "barrier")

    def __init__(self) -> None:
        self.backward: list = []  # Call nodes of x.backward(), accelerator.backward(loss)
        self.opt_step: list = []  # Call nodes of optimizer.step() / xm.optimizer_step(...)
        self.markers: list = []  # Call nodes (or With items) that mark a step
        self.dead_markers: list = []  # (marker Call, its If, why) under a test that never holds
        self.model_calls: list = []  # Call nodes whose callee may be a model (decided when linked)
        self.calls: list = []  # CallSites made directly in this body
        self.carried = False  # assigns a tensor name it also read before (x = f(x))
        self.barrier = False  # xm.optimizer_step(..., barrier=True): marks the step


class ClassInfo:
    def __init__(self, node: cst.ClassDef, name: str, cid: str, bases: list) -> None:
        self.node = node
        self.name = name
        self.cid = cid  # "module:Qual"
        self.bases = bases  # qualified names (dotted) or project ids of the bases
        self.attrs: dict = {}  # self.<name> -> [Val] assigned in its methods
        self.methods: dict = {}  # name -> fid
        self.counter_attrs: set = set()  # self.<name> += 1 in some method: a counter across calls
        self.fields: dict = {}  # `net: NetConfig` in the class body -> the instance it declares
        # `self.should_print = True` in a method: (flag, fid, ids of the interval `if`s around it)
        self.flag_sets: list = []
        self.trains = False  # a method calls backward(): the class runs training
        self.moved = False  # `self.to(...)`, or `self` handed to a call (`accelerator.prepare(self)`)
        self.host_buffers: set = set()  # buffers registered with a tensor made without a device
        self.decorators: list = []  # qualified names of its decorators


class Scope:
    """A module, class or function body."""

    def __init__(self, kind: str, node: cst.CSTNode, name: str, parent: Optional["Scope"],
                 fid: str = "", cls: Optional[ClassInfo] = None) -> None:
        self.kind = kind
        self.node = node
        self.name = name
        self.parent = parent
        self.fid = fid
        self.cls = cls  # for methods: the class they belong to
        self.bindings: dict = {}  # name -> Val, in source order (the last assignment wins)
        self.params: list = []
        self.cuda_wired: Optional[str] = None  # `x.cuda()` with nothing choosing the device (analysis.cuda)
        self.early_guards = 0  # `if is_xla(): return ...` at its top: branches pushed for the rest
        # `ignore_cache_position = True` at its top level: names bound to a bool literal, until
        # they are bound again (a later `if ignore_cache_position is False:` is dead code)
        self.const_bools: dict = {}
        # `checks = enabled and not use_tpu`: local names holding a device test ((device, positive))
        self.device_flags: dict = {}
        # `args.device = torch.device(...)`: dotted name -> the strings it can no longer equal
        # ("*": any; a torch.device never equals a string)
        self.device_objects: dict = {}
        # `indices = np.where(pos != 0)`: names bound to an index NumPy builds from data
        self.host_index_names: set = set()
        self.cpu_names: set = set()  # names bound to the host device here (`cpu = torch.device("cpu")`)
        # `REGISTRY[name] = func` in a decorator it makes: the module-level dict it registers into
        self.registers: str = ""
        self.registry_getter: str = ""  # `return REGISTRY[name]`: the module-level registry it reads
        self.dict_names: set = set()  # names bound to a dict literal here (`tokens = {"ids": []}`)
        self.pending_compile: Optional[str] = None  # a torch.compile in it (see Flow.note_compile)
        self.evidence: dict = {}  # parameter -> kind its use shows (x.new_ones(...) -> tensor)
        self.defaults: dict = {}  # parameter -> the name its default names (`forward_step=ForwardStep`)
        self.none_params: set = set()  # parameters whose default is `None` or `False`
        self.optional_ifs: dict = {}  # id(If) -> the parameter its test needs given (`if top_k is not None:`)
        self.spreads: set = set()  # indices of its calls that pass `**kwargs`
        self.facts = Facts()
        self.returns: list = []  # Vals returned
        self.int_returns: list = []  # per return: the arity of the host int sequence it returns (0: not one)
        self.loops: list = []  # Loops of this function, in source order
        self.calls: list = []  # every CallSite of the function (its body and its loops), in order
        self.property_reads: dict = {}  # (name, loop index) -> CallSite of a `self.<name>` read
        self.index_uses: list = []  # (parameter, Val of what it indexes): `alphas[index]`
        self.decorators: list = []  # qualified names of its decorators
        self.ret_annotation = None  # Val its return annotation says (`-> Tensor`), if any
        self.yields = False  # a generator: what it returns is what its name says (`iter_dataloader`)
        self.yielded: list = []  # Vals it yields (a `@contextmanager`'s are what `with ... as x` binds)
        self.if_depth = 0  # how many `if` branches enclose its definition (theirs are not its guards)
        self.outer_here = None  # a lambda passed as an argument: the point of the call it runs in
        self.interval_flags: set = set()  # names bound to a logging-interval test (`log_now = i % k == 0`)
        self.accumulation_flags: set = set()  # those of them an `if` around an optimizer step tests
        self.flag_ifs: list = []  # (id of an `if`, the interval flag it tests: `if log_now:`)
        # `params.offset += n` on an argument's attribute: name -> (Val of the object, attrs);
        # `params.offset = 0` in the same function resets it (a per-call offset, not a counter)
        self.attr_bumps: dict = {}
        self.attr_resets: set = set()  # (name, attr)
        self.buffer_setters: set = set()  # names bound to `lambda name, v: self.register_buffer(name, ...)`
        self.enumerated: set = set()  # names bound to `enumerate(...)`: the first target of a loop over one counts
        self.int_seqs: dict = {}  # name -> arity of a host list of ints (`times = t.int().tolist()`: 1)
        # `self.ids = [k.to(x.device) for k in self.ids]` at the top of its body: what `self.ids`
        # holds for the rest of the function (the class's join of every assignment elsewhere)
        self.self_binds: dict = {}
        self.carried_defs: dict = {}  # (loop index, name) -> Val the loop's body leaves in it (see Carried)

    @property
    def is_function(self) -> bool:
        return self.kind == "function"

    def __repr__(self) -> str:
        return f"<Scope {self.kind} {self.fid or self.name}>"


class Loop:
    """A for/while loop and what its body does."""

    def __init__(self, node: cst.CSTNode, scope: Scope, parent: Optional["Loop"], index: int) -> None:
        self.node = node
        self.scope = scope
        self.parent = parent  # enclosing loop in the same scope
        self.index = index  # its position among the function's loops
        self.counters: set = set()  # loop counters and values derived from them
        self.facts = Facts()
        self.loader_marks = False  # iterates an MpDeviceLoader/ParallelLoader
        self.iter_value = None  # Val of what it iterates
        self.collection = False  # a `for` over the items of a collection, not over range(n)
        self.iter_name = ""  # the name it iterates, as written (`optimizers` in `for o in self.optimizers`)
        # its passes are the parts of one step, by their names: `for micro_batch_index in range(n)`,
        # `for i in range(num_microbatches - 1)`, `for _ in range(args.gradient_accumulation_steps)`
        self.step_parts = False
        self.mini_parts = False  # `range(0, batch_size, mini_batch_size)`: parts unless it steps itself
        # it shows progress per pass (`for t in tqdm(timesteps)`, `progress_bar.update()`): a run
        # of steps a user waits on, not passes unrolled into one graph
        self.progress = False
        self.host_batch = False  # its body moves the batch it iterates to the device (host_batches)
        self.moves_parts = False  # ... the parts of the batch its target unpacks (host_batches)
        # its body yields (a generator's decoding loop, `yield tokens` once a token): each pass is
        # one pass of the loop that consumes it, not a part of one call of the function
        self.yields = False
        # its body ends in an unconditional `break`/`return`/`raise`: one pass, not a loop
        self.once = False
        self.len_of = None  # `range(len(self.unets))`: the Val whose items the counter numbers
        self.batch_parts: dict = {}  # names its target unpacks -> the value each was bound to
        self.moved_parts: set = set()  # the ones the body moves to the device (`x = x.to(device)`)
        self.assigned: set = set()  # names assigned in the body
        self.read_before_assign: set = set()
        self.mutated: set = set()  # names the body stores into (`tokens[:, i] = nxt`)
        self.fills: set = set()  # ... at a position its own counter names (`idx[:, i, j] = ix`)
        self.reads: set = set()  # names its body reads (not only to store into them)
        self.carried_vals: list = []  # values of names carried from the last pass (x = f(x))
        self.carried_in: list = []  # names bound None before it that its body binds (see Carried)
        self.carried_names: list = []  # and those names
        # name -> the names of the last pass its value in this pass was made from (`x = gen(prefix)`
        # then `prefix = x[:, :n]`: prefix from prefix), for names assigned so far in the pass
        self.deps: dict = {}
        self.if_depth = 0  # how many `if`s enclosed the loop: the ones after are inside it
        self.skip_guards = 0  # `if not interval: continue` in its body: branches it pushed for the rest
        self.block = None  # the Block of its body (definite assignments in the current pass)
        self.iterated_params: list = []  # parameters of the function the loop iterates
        self.iter_calls: frozenset = frozenset()  # ids of the calls in its iterable (run once, before it)
        self.step_reason: Optional[str] = None  # set when the file is bound to project facts

    @property
    def is_step_loop(self) -> bool:
        return self.step_reason is not None

    def chain(self) -> Iterator["Loop"]:
        loop: Optional[Loop] = self
        while loop is not None:
            yield loop
            loop = loop.parent

    def __repr__(self) -> str:
        return f"<Loop {self.scope.fid}#{self.index}>"


class Block:
    """A straight-line block being walked: what it assigned so far, and what it shadowed.

    ``defs`` are names certainly assigned in this block before the current point (a name
    assigned in a nested ``if`` counts only when both branches assign it; in a nested loop,
    never). ``prior`` keeps a name's binding from before the block's first assignment to it, so
    that an ``if``'s branches can be joined when it ends.
    """

    __slots__ = ("kind", "defs", "prior", "scope")

    def __init__(self, kind: str, scope: Scope) -> None:
        self.kind = kind  # "body" (function), "loop", "if", "else", "try", "handler", "with"
        self.defs: set = set()
        self.prior: dict = {}
        self.scope = scope


class IfFrame:
    """An ``if`` whose branches are being walked: the bindings each branch ended with."""

    __slots__ = ("node", "before", "body_end", "body_defs", "else_end", "else_defs", "has_else", "guard")

    def __init__(self, node: cst.If) -> None:
        self.node = node
        self.before: dict = {}  # name -> binding before the if (for names a branch assigns)
        self.body_end: dict = {}
        self.body_defs: set = set()
        self.else_end: dict = {}
        self.else_defs: set = set()
        self.has_else = node.orelse is not None
        self.guard = (False, None, frozenset(), False, None)  # (interval, device, once, pin_only, exits)
