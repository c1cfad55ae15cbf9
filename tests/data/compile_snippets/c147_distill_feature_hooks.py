"""Feature distillation on Gaudi: at the start of each epoch forward hooks are attached to chosen
layers of the compiled student to capture intermediate features for a matching loss, and they are
removed again at the end of the epoch before validation."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:
    htcore, BACKEND = None, "inductor"

torch.manual_seed(0)
DISTILL_LAYERS = ["3"]


def attach_feature_hooks(model, names, sink):
    handles = []
    for name, module in model.named_modules():
        if name in names:
            handles.append(module.register_forward_hook(
                lambda mod, inp, out, key=name: sink.__setitem__(key, out)))
    return handles


student = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10))
teacher = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)).eval()
proj = nn.Linear(32, 32)
cstudent = torch.compile(student, backend=BACKEND)
opt = torch.optim.SGD(list(student.parameters()) + list(proj.parameters()), lr=0.05)

for epoch in range(3):
    feats = dict.fromkeys(DISTILL_LAYERS)
    handles = attach_feature_hooks(student, DISTILL_LAYERS, feats)
    for step in range(3):
        x = torch.randn(8, 16)
        with torch.no_grad():
            t_feat = teacher[:4](x)
            t_logits = teacher[4](t_feat)
        logits = cstudent(x)
        loss = F.kl_div(logits.log_softmax(-1), t_logits.softmax(-1), reduction="batchmean")
        loss = loss + F.mse_loss(proj(feats["3"]), t_feat)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if htcore is not None:
            htcore.mark_step()
    for h in handles:
        h.remove()
    with torch.no_grad():
        val = cstudent(torch.randn(8, 16)).argmax(-1)
print(loss.detach(), val)
