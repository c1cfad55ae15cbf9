"""`torch_xla.compile` representation evaluation: after each pre-training epoch a frozen encoder
embeds a probe set and a compiled `probe_error` fits a closed-form ridge read-out from the normal
equations with `torch.linalg.solve(F^T F + lam * I, F^T Y)`, returning its mean squared error."""
import torch
import torch.nn as nn

try:
    import torch_xla
    xla_compile, device = torch_xla.compile, torch_xla.device()
except ImportError:  # CPU run without torch_xla
    torch_xla, xla_compile, device = None, torch.compile, torch.device("cpu")

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 16)).to(device).eval()


def probe_error(inputs, targets, lam=1e-3):
    feats = encoder(inputs)
    feats = torch.cat([feats, torch.ones_like(feats[:, :1])], dim=1)
    gram = feats.T @ feats + lam * torch.eye(feats.shape[1], device=feats.device)
    weights = torch.linalg.solve(gram, feats.T @ targets)
    return (feats @ weights - targets).pow(2).mean()


probe = xla_compile(probe_error)
with torch.no_grad():
    for epoch in range(4):
        inputs = torch.randn(256, 20, device=device)
        targets = torch.randn(256, 3, device=device)
        err = probe(inputs, targets)
        if torch_xla is not None:
            torch_xla.sync()
        print(epoch, f"probe mse {err.item():.4f}")
