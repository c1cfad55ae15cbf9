# MNIST-style: MpDeviceLoader over a DataLoader whose last batch is short, SGD with momentum,
# the loss logged through a step closure every second step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

device = torch_xla.device()
torch.manual_seed(1)
images = torch.randn(26, 1, 6, 6)
labels = torch.randint(0, 4, (26,))
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images, labels), batch_size=8)
model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(36, 16), torch.nn.ReLU(),
                            torch.nn.Linear(16, 4)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
loss_fn = torch.nn.NLLLoss()


def log(step, loss):
    print(f"step {step} loss {loss.item():.3f}")


for epoch in range(2):
    model.train()
    for step, (x, y) in enumerate(pl.MpDeviceLoader(loader, device)):
        opt.zero_grad()
        out = torch.nn.functional.log_softmax(model(x), dim=1)
        loss = loss_fn(out, y)
        loss.backward()
        xm.optimizer_step(opt)
        if step % 2 == 0:
            xm.add_step_closure(log, args=(step, loss))
