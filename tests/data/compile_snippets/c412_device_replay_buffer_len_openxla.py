"""DQN update through the `openxla` backend sampling from a device-resident replay buffer.

The replay buffer preallocates its storage on the device and keeps the number of stored
transitions in a 0-d tensor so that inserting never syncs with the host. Its `__len__` reports
that count as a Python int. The compiled update samples a minibatch uniformly from the filled
part of the buffer with `len(buffer)` and takes a TD step; the environment adds transitions
between updates.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
except ImportError:  # no PyTorch/XLA here: run on the CPU with the default backend
    torch_xla = None

torch.manual_seed(0)
OBS, ACTIONS, CAPACITY, GAMMA = 8, 4, 256, 0.99


class DeviceReplayBuffer:
    def __init__(self):
        self.obs = torch.zeros(CAPACITY, OBS)
        self.next_obs = torch.zeros(CAPACITY, OBS)
        self.action = torch.zeros(CAPACITY, dtype=torch.long)
        self.reward = torch.zeros(CAPACITY)
        self.count = torch.zeros((), dtype=torch.long)

    def __len__(self):
        return int(self.count.clamp(max=CAPACITY))

    def add(self, obs, action, reward, next_obs):
        idx = (self.count + torch.arange(obs.shape[0])) % CAPACITY
        self.obs[idx], self.action[idx], self.reward[idx], self.next_obs[idx] = obs, action, reward, next_obs
        self.count += obs.shape[0]


q_net = nn.Sequential(nn.Linear(OBS, 64), nn.ReLU(), nn.Linear(64, ACTIONS))
target_net = nn.Sequential(nn.Linear(OBS, 64), nn.ReLU(), nn.Linear(64, ACTIONS))
target_net.load_state_dict(q_net.state_dict())
buffer = DeviceReplayBuffer()


def td_loss(batch_size):
    idx = torch.randint(0, len(buffer), (batch_size,))
    q = q_net(buffer.obs[idx]).gather(1, buffer.action[idx, None]).squeeze(1)
    with torch.no_grad():
        target = buffer.reward[idx] + GAMMA * target_net(buffer.next_obs[idx]).amax(1)
    return F.smooth_l1_loss(q, target)


loss_fn = torch.compile(td_loss, backend="openxla" if torch_xla else "eager")
opt = torch.optim.Adam(q_net.parameters(), lr=1e-3)
for update in range(5):
    buffer.add(torch.randn(16, OBS), torch.randint(0, ACTIONS, (16,)), torch.randn(16), torch.randn(16, OBS))
    loss = loss_fn(32)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(len(buffer), round(loss.item(), 3))
