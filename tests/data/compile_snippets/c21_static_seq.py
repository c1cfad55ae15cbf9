import torch

torch.manual_seed(0)


@torch.compile
def attention_scores(q, k):
    return (q @ k.transpose(-1, -2)).softmax(-1)


for n in range(6, 18):
    q, k = torch.randn(n, 4), torch.randn(n, 4)
    torch._dynamo.mark_static(q, 0)
    torch._dynamo.mark_static(k, 0)
    attention_scores(q, k)
