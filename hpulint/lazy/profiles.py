"""Device profiles: what a lazy engine bakes into a graph as a constant and what it passes as data.

Both profiles record the same graph; they differ in how a Python number that reaches an aten op
as an arithmetic operand (schema type ``Scalar``, or a Python number where the schema wants a
tensor, which PyTorch wraps as a "wrapped number") enters the graph:

``hpu`` (Intel Gaudi lazy mode)
    Every Python scalar is a constant of the graph. Gaudi's "Avoiding Constant Variables in
    Loops" (Optimizations of PyTorch Models) shows a loop value baked into the graph recompiling
    every iteration.

``xla`` (PyTorch/XLA)
    A Python scalar becomes device data (a graph parameter), so a new value does not change the
    graph; 0, 1 and -1 are "special scalars" that XLA keeps as constants (``IsSpecialScalar`` in
    torch/csrc/lazy/core/tensor_util.cpp with ``FLAGS_torch_lazy_handle_special_scalars``, which
    torch_xla turns on unless ``XLA_NO_SPECIAL_SCALARS`` is set).

On both, integer arguments that shape the graph (``select`` index, ``slice`` bounds, sizes,
dims, ``float`` attributes such as ``eps`` or a dropout ``p``) are constants: they are not
``Scalar`` typed in the aten schema.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    device_type: str  # what tensor.device reports inside the replay
    scalars_are_data: bool  # Python scalars in arithmetic are graph inputs
    special_scalars: frozenset = frozenset()  # values kept as constants anyway
    description: str = ""

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
    scalars_are_data=False,
    description="Intel Gaudi lazy mode: Python scalars are graph constants",
)

XLA = Profile(
    name="xla",
    device_type="xla",
    scalars_are_data=True,
    special_scalars=frozenset({0.0, 1.0, -1.0}),
    description="PyTorch/XLA: Python scalars are device data except 0, 1 and -1",
)

PROFILES = {"hpu": HPU, "xla": XLA}


def get_profile(name) -> Profile:
    if isinstance(name, Profile):
        return name
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}: choose from {', '.join(PROFILES)}") from None
