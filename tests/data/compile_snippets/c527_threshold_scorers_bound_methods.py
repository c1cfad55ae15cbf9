"""Multi-label evaluation: each label family has a scorer object with its own decision threshold,
tuned on the validation set, and the compiled `evaluate(score_fn, logits, targets)` is handed the
scorer's bound `f1` method for the family being evaluated."""
import torch

torch.manual_seed(0)


class ThresholdScorer:
    def __init__(self, threshold):
        self.threshold = threshold

    def f1(self, probs, targets):
        pred = (probs > self.threshold).float()
        tp = (pred * targets).sum(0)
        precision = tp / pred.sum(0).clamp(min=1)
        recall = tp / targets.sum(0).clamp(min=1)
        return (2 * precision * recall / (precision + recall).clamp(min=1e-6)).mean()


@torch.compile
def evaluate(score_fn, logits, targets):
    return score_fn(torch.sigmoid(logits), targets)


scorers = {"topic": ThresholdScorer(0.35), "sentiment": ThresholdScorer(0.5),
           "toxicity": ThresholdScorer(0.7)}
results = {}
for epoch in range(2):
    for family, scorer in scorers.items():
        logits = torch.randn(64, 8)
        targets = (torch.rand(64, 8) > 0.6).float()
        results[family] = evaluate(scorer.f1, logits, targets)
print({k: round(v.item(), 3) for k, v in results.items()})
