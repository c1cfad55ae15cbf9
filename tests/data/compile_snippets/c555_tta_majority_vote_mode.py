"""`torch_xla.compile` test-time augmentation for a classifier: the compiled `predict` runs the
model on the original batch and on flipped, shifted and noised views, and takes the majority vote
of the views' predicted classes with `torch.mode(preds, dim=0)`, returning the vote and the share
of views that agree with it."""
import torch
import torch.nn as nn

try:
    import torch_xla
    compile_fn, device = torch_xla.compile, torch_xla.device()
except ImportError:  # CPU run without PyTorch/XLA
    torch_xla, compile_fn, device = None, torch.compile, torch.device("cpu")

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(16, 10)).to(device).eval()


def predict(images):
    views = [images, images.flip(-1), images.roll(2, dims=-1), images.roll(-2, dims=-2),
             images + 0.05 * torch.randn_like(images)]
    preds = torch.stack([model(v).argmax(-1) for v in views])
    vote = torch.mode(preds, dim=0).values
    agreement = (preds == vote).float().mean(0)
    return vote, agreement


predict_tta = compile_fn(predict)
with torch.no_grad():
    for it in range(3):
        vote, agreement = predict_tta(torch.randn(8, 3, 32, 32).to(device))
print(vote.tolist(), f"{agreement.mean().item():.2f}")
