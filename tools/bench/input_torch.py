"""PyTorch's side of tools/bench/input.sh: an ImageFolder with torchvision's
RandomResizedCrop + RandomHorizontalFlip + ToTensor through a DataLoader with
`--workers` worker processes, timed after the first batch of each epoch (the
workers' start-up left out, as on drun's side). Prints one JSON line."""
import argparse
import json
import time

import torch
from torchvision import datasets, transforms


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--epochs", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(1)
    tf = transforms.Compose([transforms.RandomResizedCrop(a.size), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor()])
    loader = torch.utils.data.DataLoader(datasets.ImageFolder(a.dir, tf), batch_size=a.batch,
                                         shuffle=True, num_workers=a.workers)
    images, seconds = 0, 0.0
    for _ in range(a.epochs):
        it = iter(loader)
        next(it)
        start = time.perf_counter()
        for x, _ in it:
            images += x.shape[0]
        seconds += time.perf_counter() - start
    print(json.dumps({"workers": a.workers, "batch": a.batch, "images": images, "seconds": seconds,
                      "images_per_sec": images / seconds, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
