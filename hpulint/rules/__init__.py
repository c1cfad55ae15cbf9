"""The rule registry: one module per rule, listed here in code order."""
from __future__ import annotations

from hpulint.rules.hpu001_loop_constant import LoopIteratorConstant
from hpulint.rules.hpu002_equal_in_hot_path import EqualInHotPath
from hpulint.rules.hpu003_growing_cat import GrowingCatAccumulator
from hpulint.rules.hpu004_missing_mark_step import MissingMarkStep
from hpulint.rules.hpu005_host_sync import HostSyncEveryStep
from hpulint.rules.hpu006_dynamic_shape import DynamicShapeInHotPath
from hpulint.rules.hpu007_short_last_batch import ShortLastBatch
from hpulint.rules.hpu008_data_dependent_control_flow import DataDependentControlFlow
from hpulint.rules.hpu009_hpu_graph_limits import HpuGraphLimits
from hpulint.rules.hpu010_context_manager_breaks_compile import ContextManagerBreaksCompile
from hpulint.rules.hpu011_scalar_constant import LoopScalarConstant
from hpulint.rules.hpu012_host_read_breaks_graph import HostReadBreaksGraph
from hpulint.rules.hpu013_branch_on_tensor_breaks_graph import BranchOnTensorBreaksGraph
from hpulint.rules.hpu014_dynamic_output_breaks_graph import DynamicOutputBreaksGraph
from hpulint.rules.hpu015_static_shapes_recompile import StaticShapesRecompile
from hpulint.rules.hpu016_module_attribute_recompile import ModuleAttributeRecompile
from hpulint.rules.hpu017_changing_python_value_recompile import ChangingValueRecompile
from hpulint.rules.hpu018_padded_to_longest import PaddedToLongest

ALL_RULES = (
    LoopIteratorConstant,
    EqualInHotPath,
    GrowingCatAccumulator,
    MissingMarkStep,
    HostSyncEveryStep,
    DynamicShapeInHotPath,
    ShortLastBatch,
    DataDependentControlFlow,
    HpuGraphLimits,
    ContextManagerBreaksCompile,
    LoopScalarConstant,
    HostReadBreaksGraph,
    BranchOnTensorBreaksGraph,
    DynamicOutputBreaksGraph,
    StaticShapesRecompile,
    ModuleAttributeRecompile,
    ChangingValueRecompile,
    PaddedToLongest,
)
RULES_BY_CODE = {r.code: r for r in ALL_RULES}
