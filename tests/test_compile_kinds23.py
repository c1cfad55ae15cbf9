"""The twenty-third held-out set's kinds, statically (no torch): standard-library calls Dynamo does not
trace (HPU012, the measured table in compile_stdlib_calls: `socket.gethostname()`,
`resource.getrusage()`, `os.getpid()`, `datetime.now()`, `os.path.exists()`...), `globals()[name]` and
`default_collate` in the compiled function, a `class` statement in the compiled region, a hook that removes its own handle (HPU012);
modules switched in place to 2 or more classes (`m.__class__ = cls`) between calls of a compiled module, a string attribute `forward` reads set to 3 or more values by a setter
method between calls (HPU016);
a 0-d tensor the loop walks used as a table index in the compiled function (HPU017).
Each snippet here, bad and look-alike, was measured on torch 2.13 (CPU, `eager` backend,
TORCH_LOGS=graph_breaks,recompiles): the counts are in the comments."""
from __future__ import annotations

import snippets
from snippets import compile_found as found, compile_messages as messages
from hpulint.rules import compile_stdlib_calls as stdlib


def quiet(src: str) -> list:
    return snippets.found(src)  # every code: nothing at all


HOST_TAG = """\
import socket
import torch
import torch.nn as nn

METRICS = {}


def worker_tag(rank):
    return f"{socket.gethostname()}-{rank}"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)

    def forward(self, x, rank):
        out = self.fc(x)
        METRICS[worker_tag(rank)] = out.detach().sum()
        return out


net = torch.compile(Net())
for _ in range(3):
    net(torch.randn(4, 8), 0)
"""
# measured: 1 break at line 9 (`_socket.gethostname`: "Attempted to call function marked as skipped"), 1 graph

HOST_ONCE = """\
import socket
import torch
import torch.nn as nn

METRICS = {}
HOST = socket.gethostname()


def worker_tag(rank):
    return f"{HOST}-{rank}"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)

    def forward(self, x, rank):
        out = self.fc(x)
        METRICS[worker_tag(rank)] = out.detach().sum()
        return out


net = torch.compile(Net())
for _ in range(3):
    net(torch.randn(4, 8), 0)
"""
# measured: no break, 1 recompile (the first call sees METRICS empty)

PROBES = """\
import os
import resource
from datetime import datetime
import torch
import torch.nn as nn

STATE = {}


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x).relu()
        STATE["rss"] = (os.getpid(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        STATE["when"] = datetime.now()
        return y


block = torch.compile(Block())
for _ in range(3):
    block(torch.randn(4, 8))
"""
# measured: 4 breaks at lines 17 and 18 (`posix.getpid`, `resource.getrusage`, `datetime.now`: "Unsupported
# method call"), 1 recompile

PROBES_OUTSIDE = """\
import os
import platform
import resource
import torch
import torch.nn as nn

STATE = {}
PEAK = []
CKPT_DIR = os.path.join(os.environ.get("OUT", "/tmp"), "ckpt")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.where = os.path.join(CKPT_DIR, platform.system().lower())

    def forward(self, x):
        y = self.fc(x).relu()
        STATE["dir"] = os.path.basename(self.where)
        return y


block = torch.compile(Block())
for _ in range(3):
    block(torch.randn(4, 8))
    PEAK.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""
# measured: no break (`os.path.join`/`basename`, `platform.system()` are traced; `getrusage` in the eager
# loop), 1 recompile

EXISTS = """\
import json
import os
import torch
import torch.nn as nn

STATS = "/tmp/k23_stats.json"


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        out = self.fc(x)
        if os.path.exists(STATS):
            out = out * 2
        return out


head = torch.compile(Head())
for _ in range(3):
    head(torch.randn(4, 8))
"""
# measured: 1 break, logged inside `os.path.exists` (`<frozen genericpath>:19`, `posix.stat`), 1 graph


def test_c_builtin_in_a_helper():
    assert found(HOST_TAG) == [("HPU012", 9)]
    assert "`socket.gethostname()`" in messages(HOST_TAG)[0]
    assert quiet(HOST_ONCE) == []


def test_process_probes_and_clock():
    assert found(PROBES) == [("HPU012", 17), ("HPU012", 17), ("HPU012", 18)]
    said = messages(PROBES)
    assert "`os.getpid()`" in said[0] and "`resource.getrusage()`" in said[1]
    assert "`datetime.datetime.now()`" in said[2] and "Unsupported method call" in said[2]
    assert quiet(PROBES_OUTSIDE) == []


def test_library_function_that_calls_a_c_builtin():
    assert found(EXISTS) == [("HPU012", 16)]
    assert "posix.stat" in messages(EXISTS)[0]


def test_json_after_a_with_open_is_not_reported():
    src = """\
import json
import torch


@torch.compile
def f(x):
    with open("/tmp/x", "a") as fh:
        fh.write(json.dumps({"a": 1}))
    s = json.dumps({"b": 2})
    return x + 1


f(torch.ones(3))
"""
    # measured: 1 break, at the `open` (line 7); the block and the rest of the function run eagerly
    assert found(src) == [("HPU012", 7)]


def test_table_is_consistent():
    reported = set(stdlib.AT_CALL) | set(stdlib.INSIDE)
    assert not reported & stdlib.TRACED
    assert not reported & stdlib.NOT_REPORTED
    assert not {q.split(".", 1)[0] for q in stdlib.TRACED} & stdlib.MODULES
    # kinds other modules report with their own messages are not in the table
    from hpulint.rules.compile_builtin_calls import FRAMES
    from hpulint.rules.compile_host_calls import DIGESTS
    from hpulint.rules.compile_library_calls import BISECT, HEAPQ
    from hpulint.rules.compile_skipped import SERIALIZE
    from hpulint.rules.compile_unsupported import GC, LOCKS
    from hpulint.rules.compile_untraced import SEEDS
    from hpulint.rules.compile_read_messages import CLOCKS, PY_RANDOM
    others = FRAMES | DIGESTS | BISECT | HEAPQ | set(SERIALIZE) | GC | LOCKS | SEEDS
    others |= {f"time.{n}" for n in CLOCKS} | {f"random.{n}" for n in PY_RANDOM}
    assert not reported & others


GLOBALS_LOOKUP = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


def swiglu(x):
    a, b = x.chunk(2, dim=-1)
    return F.silu(a) * b


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.up = nn.Linear(8, 16)
        self.down = nn.Linear(8, 8)

    def forward(self, x):
        act = globals()[self.cfg["act"]]
        return self.down(act(self.up(x)))


ff = torch.compile(FeedForward({"act": "swiglu"}))
for _ in range(3):
    ff(torch.randn(4, 8))
"""
# measured: 1 break at line 19 ("Dynamo does not know how to trace builtin operator `globals`"), 1 graph

GLOBALS_IN_INIT = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


def swiglu(x):
    a, b = x.chunk(2, dim=-1)
    return F.silu(a) * b


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.act = globals()[cfg["act"]]
        self.up = nn.Linear(8, 16)
        self.down = nn.Linear(8, 8)

    def forward(self, x):
        act = self.act
        return self.down(act(self.up(x)))


ff = torch.compile(FeedForward({"act": "swiglu"}))
for _ in range(3):
    ff(torch.randn(4, 8))
"""
# measured: no break, 1 graph (the name resolved once in `__init__`)

COLLATE_INSIDE = """\
import torch
import torch.nn as nn
from torch.utils.data import default_collate

model = nn.Linear(4, 1).eval()


@torch.compile
def score(samples):
    batch = default_collate(samples)
    return torch.sigmoid(model(batch["x"]))


with torch.no_grad():
    for _ in range(3):
        score([{"x": torch.randn(4), "id": i} for i in range(8)])
"""
# measured: 1 break at line 10 ("intentionally marked that the function `default_collate` ... should not be traced")

COLLATE_OUTSIDE = """\
import torch
import torch.nn as nn
from torch.utils.data import default_collate

model = nn.Linear(4, 1).eval()


@torch.compile
def score(x):
    return torch.sigmoid(model(x))


with torch.no_grad():
    for _ in range(3):
        batch = default_collate([{"x": torch.randn(4), "id": i} for i in range(8)])
        score(batch["x"])
"""
# measured: no break, 1 graph


def test_globals_lookup():
    assert found(GLOBALS_LOOKUP) == [("HPU012", 19)]
    assert "`globals()`" in messages(GLOBALS_LOOKUP)[0]
    assert quiet(GLOBALS_IN_INIT) == []


def test_default_collate_inside():
    assert found(COLLATE_INSIDE) == [("HPU012", 10)]
    assert "`default_collate()`" in messages(COLLATE_INSIDE)[0]
    assert quiet(COLLATE_OUTSIDE) == []
    other = COLLATE_INSIDE.replace("from torch.utils.data import default_collate",
                                   "from torch.utils.data._utils.collate import default_collate")
    assert found(other) == [("HPU012", 10)]


LOCAL_CLASSES = """\
import torch


def helper(x):
    class Plain:
        def __init__(self, t):
            self.t = t

    return Plain(x).t * 2


@torch.compile
def f(x):
    return helper(x + 1)


@torch.compile
def g(x):
    class Inner:
        scale = 2
    return x * Inner.scale


def rev(x, alpha):
    class _Rev(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.view_as(t)

        @staticmethod
        def backward(ctx, grad):
            return -alpha * grad

    return _Rev.apply(x)


@torch.compile
def h(x):
    return rev(x, 0.5).sum()


for _ in range(3):
    f(torch.randn(3))
    g(torch.randn(3))
    h(torch.randn(3, requires_grad=True))
"""
# measured: breaks at lines 5, 19 and 25 ("Invalid call to __build_class__": "Cannot trace class definition"),
# 5 breaks, 6 recompiles, 11 graphs over 3 calls of each

CLASSES_ONCE = """\
import torch


class _Rev(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, alpha):
        ctx.alpha = alpha
        return t.view_as(t)

    @staticmethod
    def backward(ctx, grad):
        return -ctx.alpha * grad, None


def make_scaler(k):
    class Scale:
        factor = k
    return Scale


SCALE = make_scaler(2)


@torch.compile
def h(x):
    return (_Rev.apply(x, 0.5) * SCALE.factor).sum()


for _ in range(3):
    h(torch.randn(3, requires_grad=True))
"""
# measured: no break, 1 graph (the Function at module level, `alpha` passed to `apply`; a class made by a
# factory called at import)


def test_class_statement_in_the_region():
    assert found(LOCAL_CLASSES) == [("HPU012", 5), ("HPU012", 19), ("HPU012", 25)]
    said = messages(LOCAL_CLASSES)
    assert "`class Plain` statement in helper()" in said[0]
    assert "`class _Rev` statement (an `autograd.Function`)" in said[2]
    assert quiet(CLASSES_ONCE) == []


HOOK_REMOVES_ITSELF = """\
import torch
import torch.nn as nn


class Once:
    def __init__(self, layer):
        self.handle = layer.register_forward_pre_hook(self)

    def __call__(self, layer, args):
        with torch.no_grad():
            layer.weight.mul_(0.5)
        self.handle.remove()


handles = {}


def warm(module, args, out):
    handles[module].remove()
    return out * 2


net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
Once(net[0])
handles[net[2]] = net[2].register_forward_hook(warm)
model = torch.compile(net)
for _ in range(4):
    model(torch.randn(4, 8))
"""
# measured: 3 breaks at lines 12 and 19 ("Attempted to represent unregistered RemovableHandle"), 1 graph

HOOK_REMOVED_OUTSIDE = """\
import torch
import torch.nn as nn


class Once:
    def __init__(self, layer):
        self.handle = layer.register_forward_pre_hook(self)

    def __call__(self, layer, args):
        with torch.no_grad():
            layer.weight.mul_(0.5)


net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
init = Once(net[0])
net(torch.randn(4, 8))
init.handle.remove()
model = torch.compile(net)
for _ in range(4):
    model(torch.randn(4, 8))
"""
# measured: no break, 1 graph (the hook runs once in the eager code and is removed before compiling)


def test_hook_that_removes_its_own_handle():
    assert found(HOOK_REMOVES_ITSELF) == [("HPU012", 12), ("HPU012", 19)]
    said = messages(HOOK_REMOVES_ITSELF)
    assert "`self.handle.remove()` in __call__(), a forward pre-hook on `layer`" in said[0]
    assert "RemovableHandle" in said[1]
    assert quiet(HOOK_REMOVED_OUTSIDE) == []


CLASS_SWAPS = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Half(nn.Linear):
    def forward(self, x):
        return F.linear(x, self.weight * 0.5, self.bias)


class Double(nn.Linear):
    def forward(self, x):
        return F.linear(x, self.weight * 2, self.bias)


model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
step = torch.compile(model)
for kind in (nn.Linear, Half, Double):
    for m in model:
        if isinstance(m, nn.Linear):
            m.__class__ = kind
    for _ in range(2):
        step(torch.randn(4, 8))
"""
# measured: no break, 2 recompiles, 3 graphs (the submodules' type, guarded in torch's container.py)

CLASS_SWAP_ONCE = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Half(nn.Linear):
    def forward(self, x):
        return F.linear(x, self.weight * 0.5, self.bias)


def convert(model, cls):
    for m in model:
        if isinstance(m, nn.Linear):
            m.__class__ = cls


model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
convert(model, Half)
step = torch.compile(model)
for _ in range(4):
    step(torch.randn(4, 8))
"""
# measured: no break, 1 graph (one switch, before compiling)


def test_class_swapped_in_place_between_calls():
    assert found(CLASS_SWAPS) == [("HPU016", 21)]
    assert "3 classes in place (`nn.Linear`, `Half`, `Double`)" in messages(CLASS_SWAPS)[0]
    assert quiet(CLASS_SWAP_ONCE) == []
    helper = CLASS_SWAP_ONCE.replace("convert(model, Half)\nstep = torch.compile(model)\nfor _ in range(4):\n"
                                     "    step(torch.randn(4, 8))",
                                     "step = torch.compile(model)\nfor kind in (None, Half, nn.Linear):\n"
                                     "    if kind is not None:\n        convert(model, kind)\n"
                                     "    step(torch.randn(4, 8))")
    # the c460 form (a `convert(model, cls)` helper over a phase loop; measured there: 2 recompiles)
    assert helper != CLASS_SWAP_ONCE
    assert found(helper) == [("HPU016", 14)]


SCALAR_INDEX = """\
import torch

table = torch.cumprod(1.0 - torch.linspace(1e-4, 0.02, 1000), dim=0)


@torch.compile
def step(x, t):
    a = table[t]
    return x * a.sqrt()


timesteps = torch.linspace(999, 0, 7).long()
x = torch.randn(4, 16)
for t in timesteps:
    x = step(x, t)
"""
# measured: no break, 6 recompiles, 7 graphs (the guard: `t.item() == 999`, then each timestep)

PER_SAMPLE_INDEX = """\
import torch

table = torch.cumprod(1.0 - torch.linspace(1e-4, 0.02, 1000), dim=0)


@torch.compile
def step(x, t):
    a = table[t].unsqueeze(-1)
    return x * a.sqrt()


timesteps = torch.linspace(999, 0, 7).long()
x = torch.randn(4, 16)
for t in timesteps:
    x = step(x, t.expand(x.shape[0]))
"""
# measured: no break, 1 graph (one index per sample)

ONE_ELEMENT_INDEX = """\
import torch

table = torch.cumprod(1.0 - torch.linspace(1e-4, 0.02, 1000), dim=0)


@torch.compile
def step(x, t):
    a = table.index_select(0, t.view(1))
    return x * a.sqrt()


@torch.compile
def step2(x, t):
    a = table[t.view(1)]
    return x * a.sqrt()


timesteps = torch.linspace(999, 0, 7).long()
x = torch.randn(4, 16)
for i in range(len(timesteps)):
    x = step(x, timesteps[i])
    x = step2(x, timesteps[i])
"""
# measured: no break, 2 graphs (one per function: `index_select(0, t.view(1))`, `table[t.view(1)]`)


def test_zero_d_tensor_index_walked_by_the_loop():
    assert found(SCALAR_INDEX) == [("HPU017", 8)]
    assert "`table[t]`" in messages(SCALAR_INDEX)[0] and "`t.item() == ...`" in messages(SCALAR_INDEX)[0]
    assert quiet(PER_SAMPLE_INDEX) == []
    assert quiet(ONE_ELEMENT_INDEX) == []


STR_ATTR_CYCLED = """\
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.heads = nn.ModuleDict({t: nn.Linear(8, 2) for t in tasks})
        self.task = tasks[0]

    def forward(self, x):
        return self.heads[self.task](x)


class Model(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.body = nn.Linear(8, 8)
        self.head = Head(tasks)

    def set_task(self, task):
        self.head.task = task

    def forward(self, x):
        return self.head(self.body(x).relu())


TASKS = ["sst2", "mnli", "qqp"]
model = Model(TASKS)
step = torch.compile(model)
for task in TASKS * 2:
    model.set_task(task)
    step(torch.randn(4, 8))
"""
# measured: no break, 2 recompiles, 3 graphs (the ModuleDict key `self.task`, guarded in container.py)

STR_ATTR_TWO_VALUES = """\
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.heads = nn.ModuleDict({t: nn.Linear(8, 2) for t in tasks})
        self.task = tasks[0]

    def forward(self, x):
        return self.heads[self.task](x)


class Model(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.body = nn.Linear(8, 8)
        self.head = Head(tasks)

    def set_task(self, task):
        self.head.task = task

    def forward(self, x):
        return self.head(self.body(x).relu())


TASKS = ["sst2", "mnli"]
model = Model(TASKS)
step = torch.compile(model)
for task in TASKS * 2:
    model.set_task(task)
    step(torch.randn(4, 8))
"""
# measured: no break, 1 recompile, 2 graphs (two tasks: not reported)


def test_string_attribute_cycled_by_a_setter():
    assert found(STR_ATTR_CYCLED) == [("HPU016", 32)]
    said = messages(STR_ATTR_CYCLED)[0]
    assert "`model.set_task(task)` sets `task`" in said and "3 values" in said
    assert quiet(STR_ATTR_TWO_VALUES) == []


HPU_BACKEND_SERVING = """\
import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:
    htcore = None
    BACKEND = "eager"

model = nn.Linear(8, 4).eval()
serve = torch.compile(model, backend=BACKEND)
with torch.no_grad():
    for batch in range(5):
        probs = serve(torch.randn(4, 8)).softmax(-1)
        if htcore is not None:
            htcore.mark_step()
        print(batch, probs.argmax(-1).tolist())
"""


def test_hpu_backend_file_is_not_lazy_mode():
    # Gaudi runs torch.compile (hpu_backend) in eager mode, where mark_step is a no-op: the lazy-mode
    # rules (HPU005's per-step host read) stay quiet around the compiled call (the c457 look-alike)
    assert quiet(HPU_BACKEND_SERVING) == []
    lazy = 'import os\nos.environ["PT_HPU_LAZY_MODE"] = "1"\n' + HPU_BACKEND_SERVING
    assert snippets.found(lazy) == [("HPU005", 20)]


HPU_TRAIN = """\
import sys
import torch
import torch.nn as nn
import habana_frameworks.torch.core as htcore

model = nn.Linear(8, 4).to("hpu")
{COMPILE}
opt = torch.optim.SGD(model.parameters(), 0.1)
for step in range(100):
    loss = model(torch.randn(4, 8, device="hpu")).sum()
    loss.backward()
    opt.step()
    htcore.mark_step()
    print(loss.item())
"""


def test_hpu_backend_only_under_a_flag_leaves_the_lazy_path_lazy():
    # a Gaudi script that compiles with hpu_backend only when asked, and otherwise marks its steps
    # in lazy mode (Model-References' LoRA fine-tuning): the lazy-mode rules still apply to it
    flagged = HPU_TRAIN.replace("{COMPILE}", 'if "--compile" in sys.argv:\n    model = torch.compile(model, backend="hpu_backend")')
    assert ("HPU005", 15) in snippets.found(flagged)
    always = HPU_TRAIN.replace("{COMPILE}", 'model = torch.compile(model, backend="hpu_backend")')
    assert snippets.found(always) == []
