# A two-layer GRU with dropout between the layers and before the head: trained in train mode,
# validated in eval mode every third step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(31)


class GRUNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(3, 12, num_layers=2, dropout=0.3, batch_first=True)
        self.drop = torch.nn.Dropout(0.3)
        self.head = torch.nn.Linear(12, 1)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.head(self.drop(out[:, -1]))


model = GRUNet().to(device)
opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
val_x = torch.randn(8, 7, 3).to(device)
val_y = torch.randn(8, 1).to(device)
for step in range(9):
    model.train()
    x, y = torch.randn(8, 7, 3).to(device), torch.randn(8, 1).to(device)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    if step % 3 == 2:
        model.eval()
        with torch.no_grad():
            val_loss = torch.nn.functional.mse_loss(model(val_x), val_y)
        xm.mark_step()
        print(f"step {step} val {val_loss.item():.4f}")
