"""Names: the APIs hpulint knows by their qualified name, and what names users give things.

Pure tables and pure functions of strings: no state, no libcst, no torch (the link step and the
cache import this without the parser).
"""
from __future__ import annotations

import re
from typing import Optional

# --- step markers and loaders ------------------------------------------------------------------

STEP_MARKERS = frozenset(
    {
        "habana_frameworks.torch.core.mark_step",
        "torch_xla.core.xla_model.mark_step",
        "torch_xla.sync",
        "torch_xla.torch_xla.sync",
        "torch._lazy.mark_step",
    }
)
# `with torch_xla.step():` marks a step when the block ends (PyTorch/XLA 2.x)
STEP_CONTEXTS = frozenset({"torch_xla.step", "torch_xla.torch_xla.step"})
MARKING_LOADERS = frozenset(
    {
        "torch_xla.distributed.parallel_loader.MpDeviceLoader",
        "torch_xla.distributed.parallel_loader.ParallelLoader",
        "torch_xla.distributed.parallel_loader.MpDeviceLoaderWrapper",
    }
)
XLA_OPTIMIZER_STEP = "torch_xla.core.xla_model.optimizer_step"
# PyTorch/XLA's eager mode (every op runs at once; torch.compile is then the graph path)
XLA_EAGER_MODE = frozenset({"torch_xla.experimental.eager_mode", "torch_xla.experimental.eager.eager_mode",
                            "torch_xla.experimental.eager_mode_context",
                            "torch_xla.experimental.eager.eager_mode_context",
                            "torch_xla._XLAC._set_use_eager_mode"})
# a function given to these runs on every forward (backward) of the module or tensor it is hooked on
HOOK_REGISTRATIONS = frozenset({"register_hook", "register_forward_hook", "register_forward_pre_hook",
                                "register_full_backward_hook", "register_full_backward_pre_hook",
                                "register_backward_hook", "register_post_accumulate_grad_hook"})
# calls whose function argument runs later, not in the call (a logging closure, a hook)
DEFERRED_CALLBACKS = HOOK_REGISTRATIONS | frozenset({"add_step_closure", "submit", "apply_async", "Thread",
                                                     "Process", "atexit.register"})

# --- torch: what returns a tensor ----------------------------------------------------------------

BOOL_RESULT_TORCH = frozenset({"equal", "allclose", "is_tensor", "is_floating_point", "is_complex",
                               "is_nonzero", "is_storage", "is_same_size", "numel", "typename"})
# torch.* callables that do not return one tensor
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
        "median", "mode", "cummax", "cummin", "slogdet", "geqrf", "set_default_device",
        "get_default_device", "set_float32_matmul_precision", "cond",
    }
)
# tuple-returning torch functions whose elements are tensors (`values, idx = torch.max(x, 1)`)
TUPLE_OF_TENSORS_TORCH = frozenset({"split", "chunk", "unbind", "meshgrid", "broadcast_tensors",
                                    "tensor_split", "hsplit", "vsplit", "dsplit", "sort", "topk",
                                    "max", "min", "std_mean", "var_mean", "aminmax", "kthvalue",
                                    "median", "mode", "cummax", "cummin", "svd", "qr", "unique",
                                    "nonzero", "where", "frexp", "slogdet"})
TENSOR_NAMESPACES = ("torch.", "torch.nn.functional.", "torch.fft.", "torch.linalg.", "torch.special.")
NON_TENSOR_NAMESPACES = (
    "torch.cuda.", "torch.backends.", "torch.distributed.", "torch.jit.", "torch.fx.",
    "torch.utils.", "torch.autograd.", "torch.onnx.", "torch._C.", "torch.hub.", "torch.compiler.",
    "torch.library.", "torch.testing.", "torch.optim.", "torch.export.", "torch._dynamo.",
    "torch.overrides.", "torch.multiprocessing.", "torch.profiler.", "torch.ao.", "torch.nn.init.",
    "torch.nn.utils.", "torch.nn.modules.", "torch.hpu.", "torch.xpu.", "torch.mps.", "torch.cpu.",
    "torch.amp.", "torch.func.", "torch.sparse.", "torch.nested.", "torch._", "torch.ops.",
)
# torch functions that turn host data into a (host) tensor: their argument is not a tensor
# the legacy typed constructors (`torch.LongTensor(ids)`): CPU tensors; their `torch.cuda.`
# twins make tensors on the accelerator
LEGACY_TENSOR_TYPES = ("Tensor", "LongTensor", "FloatTensor", "BoolTensor", "IntTensor", "DoubleTensor",
                       "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor")
CONVERSIONS = frozenset({"torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.asarray"}
                        | {f"torch.{n}" for n in LEGACY_TENSOR_TYPES})
HOST_FACTORIES = frozenset(
    f"torch.{n}" for n in ("zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange",
                           "linspace", "logspace", "eye", "tensor", "as_tensor", "from_numpy", "randperm",
                           "asarray") + LEGACY_TENSOR_TYPES
)
MASK_FUNCTIONS = frozenset(
    f"torch.{n}" for n in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "logical_and",
                           "logical_or", "logical_not", "logical_xor", "eq", "ne", "gt", "ge", "lt",
                           "le", "isin", "isclose", "signbit", "all", "any")
)
MASK_METHODS = frozenset({"bool", "eq", "ne", "gt", "ge", "lt", "le", "isnan", "isinf", "isfinite",
                          "logical_and", "logical_or", "logical_not", "isclose", "all", "any",
                          "__eq__", "__ne__", "__gt__", "__lt__", "__ge__", "__le__"})
# tensor methods whose result is not one tensor; what they give instead
NON_TENSOR_METHODS = {
    "item": "data", "tolist": "seq", "numpy": "host", "size": "size", "dim": "scalar",
    "ndimension": "scalar", "numel": "scalar", "nelement": "scalar", "stride": "seq",
    "data_ptr": "scalar", "element_size": "scalar", "storage": "other", "untyped_storage": "other",
    "storage_offset": "scalar", "is_contiguous": "scalar", "is_floating_point": "scalar",
    "is_complex": "scalar", "is_signed": "scalar", "is_pinned": "scalar", "equal": "data", "allclose": "data",
    "type": "other", "get_device": "scalar", "register_hook": "other", "backward": "none",
    "split": "seq-tensor", "chunk": "seq-tensor", "unbind": "seq-tensor", "tensor_split": "seq-tensor",
    "max": "maybe-tuple", "min": "maybe-tuple", "sort": "seq-tensor", "topk": "seq-tensor",
    "unique": "maybe-tuple", "nonzero": "maybe-tuple", "svd": "seq-tensor", "qr": "seq-tensor",
    "kthvalue": "seq-tensor", "median": "maybe-tuple", "mode": "seq-tensor", "aminmax": "seq-tensor",
    "cummax": "seq-tensor", "cummin": "seq-tensor", "cpu": "host", "copy_": "tensor",
    # a tensor has no dict methods: a value they are called on is a dict (`model_kwargs.get(
    # "use_cache")`) or a model output, whose entries are anything
    "get": "unknown", "keys": "seq", "items": "seq", "values": "seq", "setdefault": "unknown",
    "pop": "unknown", "update": "none",
}
# methods that only a torch tensor has (used as evidence that an unannotated parameter is one)
TENSOR_EVIDENCE = frozenset(
    {
        "new_ones", "new_zeros", "new_full", "new_empty", "new_tensor", "long", "detach",
        "contiguous", "unsqueeze", "squeeze", "view", "view_as", "permute", "masked_fill",
        "masked_fill_", "softmax", "log_softmax", "type_as", "is_cuda", "grad", "clamp", "clamp_",
        "expand", "expand_as", "bmm", "matmul", "shape", "dim", "numel", "item",
        "index_select", "gather", "scatter", "masked_select", "narrow",
        "chunk", "norm", "pow", "sqrt", "exp", "sigmoid", "tanh", "relu", "addcmul",
        "addcmul_", "mul_", "add_", "sub_", "div_", "zero_", "fill_", "copy_",
        "roll", "repeat_interleave", "element_size", "clone", "float", "half", "bfloat16",
    }
)
TENSOR_ATTRIBUTES = frozenset({"data", "grad", "T", "mT", "H", "mH", "real", "imag"})
# attributes of a tensor that are Python values (flags, metadata)
TENSOR_HOST_ATTRIBUTES = frozenset({"device", "dtype", "layout", "requires_grad", "ndim", "names",
                                    "itemsize", "nbytes", "output_nr", "grad_fn", "_version",
                                    "retains_grad",
                                    # methods read, not called (`out.type == "hpu"`): bound methods
                                    "type", "size", "dim", "numel", "stride", "element_size",
                                    "get_device", "data_ptr", "is_contiguous", "tolist", "item",
                                    # what an image has and a tensor does not (`image.width / image.height`
                                    # in a helper that takes PIL images or tensors): a Python number
                                    "width", "height"})


def is_flag_name(name: str) -> bool:
    """`is_quantized`, `_is_owner`, `has_bias`, `was_step_applied`: a name that reads as a
    Python bool."""
    return name.lstrip("_").startswith(("is_", "has_", "was_", "should_"))
def is_housekeeping_name(name: str) -> bool:
    """`load_checkpoint`, `save_pretrained`, `disable_forward_pre_hook`, `set_states`: a method of
    a model that manages it (weights, hooks, state) rather than running it on data."""
    return is_flag_name(name) or name.lstrip("_").startswith((
        "load_", "save_", "set_", "get_", "register_", "enable_", "disable_", "reset_", "init_", "zero_",
        "state_dict", "named_"))


# methods of an nn.Module that are not a forward pass: what they return
MODULE_METHODS = {
    "to": "model", "cuda": "model", "cpu": "model", "train": "model", "eval": "model",
    "float": "model", "half": "model", "bfloat16": "model", "double": "model",
    "requires_grad_": "model", "share_memory": "model", "apply": "model", "compile": "none",
    "parameters": "seq", "named_parameters": "seq", "buffers": "seq", "named_buffers": "seq",
    "modules": "seq", "named_modules": "seq", "children": "seq", "named_children": "seq",
    "state_dict": "other", "load_state_dict": "other", "zero_grad": "none",
    "register_buffer": "none", "register_parameter": "none", "register_module": "none",
    "add_module": "none", "register_forward_hook": "other", "register_forward_pre_hook": "other",
    "register_full_backward_hook": "other", "get_parameter": "tensor", "get_buffer": "tensor",
    "get_submodule": "model", "extra_repr": "other", "__repr__": "other", "__str__": "other", "save_pretrained": "none",
    "from_pretrained": "model", "gradient_checkpointing_enable": "none", "tie_weights": "none",
    "resize_token_embeddings": "other", "get_input_embeddings": "model",
    "get_output_embeddings": "model", "log": "none", "log_dict": "none", "print": "none",
    "save_hyperparameters": "none", "configure_optimizers": "other", "manual_backward": "none",
    "optimizers": "optimizer", "lr_schedulers": "other", "toggle_optimizer": "none",
    "untoggle_optimizer": "none", "clip_gradients": "none", "no_sync": "other",
    "set_adapter": "none", "enable_adapters": "none", "disable_adapters": "none",
    # ModuleList / ModuleDict / Sequential / ParameterList containers
    "append": "none", "extend": "none", "insert": "none", "pop": "model", "keys": "seq",
    "values": "seq", "items": "seq", "update": "none", "clear": "none", "index": "scalar",
    "register_state_dict_pre_hook": "other", "register_load_state_dict_post_hook": "other",
    "named_modules_to_save": "seq", "requires_grad": "none", "type": "model", "to_empty": "model",
    "reset_parameters": "none", "init_weights": "none", "_init_weights": "none",
    "post_init": "none", "set_attn_processor": "none", "enable_xformers_memory_efficient_attention": "none",
    "set_default_attn_processor": "none", "fuse_qkv_projections": "none",
}
MODULE_CHAIN = frozenset(k for k, v in MODULE_METHODS.items() if v == "model")
MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# framework base classes whose subclasses are models (their forward or step hooks run each step)
MODEL_BASES = frozenset(
    {
        "pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
        "pytorch_lightning.core.module.LightningModule", "lightning.LightningModule",
        "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
        "lightning.pytorch.core.module.LightningModule", "transformers.PreTrainedModel",
        "transformers.modeling_utils.PreTrainedModel", "diffusers.ModelMixin",
        "diffusers.models.modeling_utils.ModelMixin", "composer.models.ComposerModel",
        "composer.ComposerModel", "torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict",
    }
)
# methods that run once per object (set-up, not per call or per step)
SETUP_METHODS = frozenset({"__init__", "__post_init__", "setup", "build", "reset_parameters"})
# methods called once per step by a framework (Lightning, Hugging Face, composer)
STEP_HOOKS = frozenset({"training_step", "validation_step", "test_step", "predict_step",
                        "training_step_end", "validation_step_end", "compute_loss",
                        "prediction_step", "eval_forward", "train_step", "eval_step"})

# --- heuristics on names --------------------------------------------------------------------------

_MODEL_WORDS = (
    "model|net|network|encoder|decoder|generator|discriminator|unet|vae|transformer|backbone|"
    "policy|critic|actor|teacher|student|classifier|denoiser|diffusion|ema_model|text_encoder"
)
_MODEL_NAME = re.compile(rf"^(?:([a-z0-9]+)_)?(?:{_MODEL_WORDS})\d*(?:_([a-z0-9]+))?$")
# `build_model(...)`, `load_model(...)`: functions that make or handle a model, not a model
_VERBS = frozenset(
    "build create make load get init compare run save export check prepare wrap unwrap copy clone "
    "freeze unfreeze convert quantize trace script compile fuse setup train eval evaluate test "
    "validate print log update register set reset to from is has apply call forward name type "
    "config cfg args kwargs path dir file url id ids type kind "
    # a function, hook or class named after a model (`classifier_fn`, `model_cls`) is not one
    "fn fns func function hook hooks callback cb factory builder cls class "
    # what a model takes, gives or holds (`model_input`, `encoder_outputs`, `net_state`) is data
    "input inputs output outputs out outs state states dict params parameters weights size dim "
    "dtype device mode key keys logits loss losses pred preds embeds mask masks names idx index "
    "list tensor tensors kwarg arg info version tag "
    # a generator of numbers (`sigma_generator`, `rng_generator`) is no generator network
    "sigma sigmas random rng seed number range time timestep timesteps step steps iter "
    # a performance or cost model (`perf_model` of a Triton autotuner) estimates timings
    "perf cost".split()
)
OPTIMIZER_NAME = re.compile(r"(?:^|_)(?:opt|optim|optimizer|optimiser)s?(?:_\w+)?$|optimizer", re.I)
# `positions_cpu`, `cpu_lens`, `seq_lens_np`, `host_ids`: a value named for the host
HOST_NAME = re.compile(r"(?:^|_)(?:cpu|host|np|numpy)(?:$|_)", re.I)


def is_host_name(name: Optional[str]) -> bool:
    return bool(name) and HOST_NAME.search(name) is not None


LOADER_NAME = re.compile(r"(?:^|_)(?:data)?loader$", re.I)


def is_model_name(name: str) -> bool:
    """``model``, ``net``, ``ddp_model``, ``model_engine``, ``encoder2``: names users give models."""
    m = _MODEL_NAME.match(name.lower())
    return bool(m) and m.group(1) not in _VERBS and m.group(2) not in _VERBS


# a parameter a sampler calls to run the network (`model_fn(x, t)` in a DPM-Solver, `denoise_fn`
# in a diffusion loop): the wrapped model, whatever the caller passes
_MODEL_FN_PARAM = re.compile(r"^(?:model|net|unet|denoiser?|eps|score)_(?:fn|func|function)$")


def is_model_fn_param(name: str) -> bool:
    return bool(_MODEL_FN_PARAM.match(name))


# class methods that load a library's pretrained object, and the class names that are modules
# (not a tokenizer, a processor, a scheduler, a config or a pipeline of several modules)
PRETRAINED_LOADERS = frozenset({"from_pretrained", "from_config", "from_single_file"})
_MODEL_CLASS = re.compile(r"^(?!.*(?:Tokenizer|Processor|Config|Scheduler|Pipeline|Extractor))"
                          r".*(?:Model|For[A-Z]|UNet|Transformer|Autoencoder|VAE|VQ|Net$|LM$)")


def is_model_class_name(name: str) -> bool:
    """``AutoModelForCausalLM``, ``UNet2DConditionModel``, ``ResNet``: a library class of modules."""
    return bool(_MODEL_CLASS.search(name))


# `envs.step(action)`, `self.env.step(a)`, `venv.step(actions)`: a reinforcement-learning
# environment stepped with an action
_ENV_NAME = re.compile(r"^_?(?:\w+_)?v?envs?\d*$|^environments?$", re.I)


def is_env_name(name: Optional[str]) -> bool:
    """``env``, ``envs``, ``venv``, ``train_envs``, ``environment``: names users give environments."""
    return bool(name) and _ENV_NAME.match(name) is not None


_TOKENIZER_NAME = re.compile(r"(?:^|_)tokenizer_?\d*$", re.I)


def is_tokenizer_name(name: Optional[str]) -> bool:
    """``tokenizer``, ``self.tokenizer_2``, ``text_tokenizer``: a text tokenizer, whose ids
    (`tokenizer(prompt, return_tensors="pt").input_ids`) are CPU tensors."""
    return bool(name) and bool(_TOKENIZER_NAME.search(name))


def is_optimizer_name(name: Optional[str]) -> bool:
    return bool(name) and (bool(OPTIMIZER_NAME.search(name)) or name == "scaler")


# NumPy functions whose result is an index built from data: its length follows the data
HOST_INDEX_FUNCTIONS = frozenset({"numpy.where", "numpy.nonzero", "numpy.flatnonzero", "numpy.argwhere",
                                  "numpy.unique"})

# the usual aliases of the modules the rules know, taken at their word when a file uses one it
# does not import itself but has a star import (`from utils import *` re-exports `np`)
STAR_CONVENTIONS = {"np": "numpy", "torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional",
                    "htcore": "habana_frameworks.torch.core", "xm": "torch_xla.core.xla_model"}
