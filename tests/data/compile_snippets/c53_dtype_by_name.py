import torch

torch.manual_seed(0)


@torch.compile
def cast_scale(x, dtype_name):
    return (x * 2).to(getattr(torch, dtype_name))


for i in range(12):
    name = ["float32", "float64", "bfloat16"][i % 3]
    cast_scale(torch.randn(4), name)
