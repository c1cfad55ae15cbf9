"""HPU012's messages and the tables of calls it names (Python clocks and random draws Dynamo
skips), measured on torch 2.13."""
from __future__ import annotations

MESSAGE = (
    "{why}, so the graph breaks here on every call (graph break: the graph ends, Python runs it, "
    "the rest compiles as another graph). {fix}"
)
CONTEXT_MESSAGE = (
    "{why}, so the graph breaks here; in a `with` block's context manager Dynamo does not resume: the "
    "function that runs the `with` runs eagerly (no graph of its own), and the context manager's later lines "
    "are not traced. {fix}"
)
READ = "Dynamo cannot trace a read of a tensor's value to the host"
UNTRACED = "Dynamo does not trace print and logging calls, whatever they print"
FIX_RETURN = ("Move the read out of the compiled function: return the tensor and read it in the "
              "eager code around it, on logging steps only")
FIX_SCALAR = FIX_RETURN + ", or set `torch._dynamo.config.capture_scalar_outputs = True`"
FIX_PRINT = ("Return the value and print or log it in the eager code around the compiled "
             "function (or drop the debug print)")
AUTOGRAD = ("Dynamo does not trace a backward pass inside the compiled function "
            "(\"Unsupported Tensor.backward() call\"; `trace_autograd_ops` is off by default)")
FIX_BACKWARD = ("Return the loss and call `.backward()` in the eager code around the compiled function "
                "(the backward of a compiled forward is compiled too)")
SKIPPED = "Dynamo does not trace `{name}()` (it skips the call: {kind})"
FIX_TIME = ("Read the clock in the eager code around the compiled call (after a device synchronize), "
            "or use the profiler")
FIX_RANDOM = ("Draw it in the eager code and pass it in, or draw a tensor with torch "
              "(`torch.rand(())`) and use it without a Python branch on it (`torch.where`)")
DEEPCOPY = "Dynamo does not support `copy.deepcopy()` of a tensor, nor of a module that holds tensors"
FIX_DEEPCOPY = "Make the copy once in the eager code, outside the compiled function, and keep or pass it"
# time (measured on 2.13: each one breaks the graph)
CLOCKS = frozenset({"time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "process_time", "monotonic_ns",
                    "process_time_ns", "thread_time", "thread_time_ns"})
# Python random draws Dynamo 2.13 skips (randint, randrange and uniform are traced)
PY_RANDOM = frozenset({"random", "gauss", "normalvariate", "choice", "choices", "shuffle", "sample",
                       "getrandbits", "triangular", "betavariate", "expovariate"})
RNN_WORDS = ("GRU", "LSTM", "RNN")
