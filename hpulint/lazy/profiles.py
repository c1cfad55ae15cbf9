"""Device profiles: what a lazy engine bakes into a graph as a constant and what it passes as data.

Both profiles record the same graph; they differ in how a Python number that reaches an aten op
as an arithmetic operand (schema type ``Scalar``, or a Python number where the schema wants a
tensor, which PyTorch wraps as a "wrapped number") enters the graph:

``xla`` (PyTorch/XLA)
    A Python scalar becomes device data (a graph parameter), so a new value does not change the
    graph; 0, 1 and -1 are "special scalars" that XLA keeps as constants (``IsSpecialScalar`` in
    torch/csrc/lazy/core/tensor_util.cpp with ``FLAGS_torch_lazy_handle_special_scalars``, which
    torch_xla turns on unless ``XLA_NO_SPECIAL_SCALARS`` is set). Measured on torch_xla 2.9
    (tests/data/calibration: ``scalar_learning_rate``, ``adam_stock``, ``scalar_special_values``).

``hpu`` (Intel Gaudi lazy mode)
    Gaudi's documents say that loop values used as indices or shapes become constant operators
    ("Avoiding Constant Variables in Loops", Optimizations of PyTorch Models); they do not say that
    a Python scalar *operand* (an optimizer's bias correction, a learning rate) is baked into the
    graph. So, where no source says otherwise, scalar operands are treated as on ``xla``.
    ``--scalars constant`` (``get_profile(name, scalars="constant")``) keeps the worst case, every
    Python scalar a constant, and the report names it as an assumption.

On both, integer arguments that shape the graph (``select`` index, ``slice`` bounds, sizes,
dims, ``float`` attributes such as ``eps`` or a dropout ``p``) are constants: they are not
``Scalar`` typed in the aten schema.
"""
from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Profile:
    name: str
    device_type: str  # what tensor.device reports inside the replay
    scalars_are_data: bool  # Python scalars in arithmetic are graph inputs
    special_scalars: frozenset = frozenset()  # values kept as constants anyway
    description: str = ""
    assumption: str = ""  # said in the report: a behaviour no source or engine run confirms
    # a host read through a CPU fallback (item, bool, torch.equal, nonzero...) leaves the tensor's
    # graph pending: the next step marker computes it again (PyTorch/XLA's GetTensorsFused syncs
    # with force_ltc_data=false; measured on torch_xla 2.9: tests/data/calibration)
    reads_keep_graph: bool = False
    # a host read computes the read tensor and keeps its IR: the next step marker does not
    # compute it again, but later graphs that use the tensor do (torch._lazy's GetTensorsFused;
    # measured on torch 2.13: tests/test_calibration_ltc.py)
    reads_keep_ir: bool = False
    # a tensor moved to the device stays host data until the next step marker, which syncs it
    # as an extra output of its graph if an op used it (a graph of such uploads alone if
    # nothing else is pending) and uploads it without a graph if none did; after that it is
    # device data (torch._lazy; measured on torch 2.13)
    deferred_uploads: bool = False
    # a Python scalar passed as data is typed by its Python type: 2 and 2.0 are different
    # graph inputs (Long and Double data on torch._lazy; measured on torch 2.13)
    typed_scalars: bool = False
    # ops whose Scalar arguments are constants even where scalars are data: arange's bounds
    # shape its output; pow's exponent is lowered as a constant (measured on torch_xla 2.9)
    constant_scalar_ops: frozenset = frozenset({"aten.arange", "aten.range", "aten.pow"})
    # equal scalar operands of one type share one device buffer, so one graph parameter: the
    # size of PyTorch/XLA's scalar data cache (scalar_data.py; 0: every scalar its own input)
    scalar_cache: int = 0

    def scalar_is_constant(self, value) -> bool:
        """Is this Python number baked into the graph (True) or passed as device data (False)?"""
        if not self.scalars_are_data:
            return True
        if type(value) is bool:  # at::Scalar::isIntegral(false) excludes bool: never special
            return False
        try:
            return float(value) in self.special_scalars
        except (TypeError, ValueError):  # complex numbers and the like
            return False


HPU = Profile(
    name="hpu",
    device_type="hpu",
    scalars_are_data=True,
    special_scalars=frozenset({0.0, 1.0, -1.0}),
    description="Intel Gaudi lazy mode: index, shape and dim integers are graph constants; "
                "scalar operands as on PyTorch/XLA (data except 0, 1 and -1)",
)

XLA = Profile(
    name="xla",
    device_type="xla",
    scalars_are_data=True,
    special_scalars=frozenset({0.0, 1.0, -1.0}),
    reads_keep_graph=True,
    scalar_cache=128,
    description="PyTorch/XLA: Python scalars are device data except 0, 1 and -1",
)

PROFILES = {"hpu": HPU, "xla": XLA}
SCALARS = ("data", "constant")
CONSTANT_SCALARS = ("every Python scalar operand is a graph constant (--scalars constant): a new "
                    "learning rate or bias correction recompiles; no source or engine run here "
                    "shows this")


def get_profile(name, scalars=None) -> Profile:
    """The profile ``name``; ``scalars="constant"`` bakes every Python scalar into the graph."""
    if isinstance(name, Profile):
        profile = name
    else:
        try:
            profile = PROFILES[name]
        except KeyError:
            raise ValueError(f"unknown profile {name!r}: choose from {', '.join(PROFILES)}") \
                from None
    if scalars in (None, "data"):
        return profile
    if scalars != "constant":
        raise ValueError(f"unknown scalars {scalars!r}: choose from {', '.join(SCALARS)}")
    return replace(profile, scalars_are_data=False, special_scalars=frozenset(),
                   constant_scalar_ops=frozenset(),
                   description=profile.description.split(":")[0] + ": every Python scalar is a "
                   "graph constant", assumption=CONSTANT_SCALARS)
