import torch

torch.manual_seed(0)


@torch.compile
def best_answer_span(start_logits, end_logits, top=3):
    candidates = []
    for i in range(start_logits.shape[0]):
        for j in range(i, min(i + 4, end_logits.shape[0])):
            candidates.append((float(start_logits[i] + end_logits[j]), i, j))
    candidates.sort(reverse=True)
    return candidates[:top]


for _ in range(2):
    spans = best_answer_span(torch.randn(6), torch.randn(6))
print(spans)
