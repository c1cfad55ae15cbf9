"""Audio dataset whose `__getitem__` applies a compiled augmentation: random gain and additive
noise, with the noise level offset per DataLoader worker (`torch.utils.data.get_worker_info()`)
so that the workers do not produce identical corruption."""
import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info

torch.manual_seed(0)


@torch.compile
def augment(wave, base_snr_db):
    info = get_worker_info()
    worker = 0 if info is None else info.id
    snr_db = base_snr_db + 2.0 * worker
    gain = torch.empty(1).uniform_(0.7, 1.3)
    noise = torch.randn_like(wave) * wave.pow(2).mean().sqrt() * 10 ** (-snr_db / 20)
    return gain * wave + noise


class NoisySpeech(Dataset):
    def __init__(self, n=12, length=4000):
        self.clips = torch.randn(n, length)

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, i):
        return augment(self.clips[i], 20.0)


loader = DataLoader(NoisySpeech(), batch_size=4, num_workers=0)
energy = [batch.pow(2).mean().item() for batch in loader]
print([round(e, 3) for e in energy])
