#!/usr/bin/python3
"""PyTorch peer benchmark for drun's ResNet-20 (CIFAR-10) training step.

ResNet-20 as models/resnet_cifar.lua builds it (He et al. 2015, section 4.2,
shortcut option B): 3x3 conv 16 - BN - ReLU; three stages of 3 basic blocks
(16, 32, 64 filters, the first block of stages 2 and 3 with stride 2), each
conv3x3-BN-ReLU-conv3x3-BN + shortcut, ReLU; the shortcut a 1x1 conv stride 2
+ BN where the shape changes; global average pooling; Linear(64, 10).
Convolutions without bias, BN momentum 0.1 (PyTorch's convention) eps 1e-5;
272,474 trainable parameters. Softmax cross-entropy; SGD lr 0.1 momentum 0.9
weight decay 2e-4 (PyTorch's is L2 on the gradient, drun's Keras 3's
decoupled decay: the same arithmetic cost); batch 128; float32; NCHW (PyTorch's
native CPU layout; drun runs NHWC).

Data: a pool of random 32x32x3 images (uniform 0..1, float32) and random
labels, built once; each step gathers a batch of random indices, as a real
epoch would (the gather is timed, as drun's input pipeline is).

Run in PyTorch's best configuration on this machine (see torch_timing.py, the
timing harness shared with seed_cnn_torch.py; tools/bench/resnet20.sh sets it).
--device cuda (tools/bench/gpu.sh) trains on GPU 0, the image pool built there.

Prints one JSON line per --variants entry (torch_timing.py; default fp32):
  {"framework":"pytorch","model":"resnet20","threads":N,"batch":128,"steps":S,
   "images_per_sec":...,"seconds":...,"step_ms":...,"step_ms_median":...,
   "final_loss":...,"variant":"fp32","params":274042,"trainable_params":272474,
   "device":"cpu"}
(on cuda also gpu_name, torch, cuda, cudnn, tf32, cudnn_benchmark)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_timing  # noqa: E402


def resnet_cifar(n=3, classes=10):
    import torch.nn as nn

    def conv_bn(cin, cout, k, stride):
        return [nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, bias=False),
                nn.BatchNorm2d(cout, eps=1e-5, momentum=0.1)]

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = nn.Sequential(*conv_bn(cin, cout, 3, stride), nn.ReLU(inplace=True),
                                      *conv_bn(cout, cout, 3, 1))
            self.shortcut = (nn.Sequential(*conv_bn(cin, cout, 1, stride))
                             if stride != 1 or cin != cout else nn.Identity())
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            return self.relu(self.body(x) + self.shortcut(x))

    layers = [*conv_bn(3, 16, 3, 1), nn.ReLU(inplace=True)]
    cin = 16
    for stage, cout in enumerate((16, 32, 64)):
        for b in range(n):
            layers.append(Block(cin, cout, 2 if stage > 0 and b == 0 else 1))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, classes)]
    model = nn.Sequential(*layers)
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(m.weight)
    return model


def main():
    def model_options(ap):
        ap.add_argument("--pool", type=int, default=2560, help="random images to draw batches from")
        ap.add_argument("--n", type=int, default=3, help="blocks per stage (3: ResNet-20)")
    args = torch_timing.parse_args(steps=50, warmup=5, batch=128, add_options=model_options)
    torch = torch_timing.setup_torch(args.threads, args.seed, args.device,
                                     args.tf32, bool(args.cudnn_benchmark))
    import torch.nn as nn

    B = args.batch
    pool = max(args.pool, B)
    # Drawn on the CPU whatever the device, so that the pool is the same.
    x_all = torch.rand(pool, 3, 32, 32).to(args.device)
    y_all = torch.randint(0, 10, (pool,)).to(args.device)

    def make_model():
        return resnet_cifar(args.n).to(args.device)

    probe = make_model()
    trainable = sum(p.numel() for p in probe.parameters() if p.requires_grad)
    # Keras' count (drun's): weights plus the batch-norm moving means and variances.
    params = trainable + sum(b.numel() for name, b in probe.named_buffers()
                             if name.endswith(("running_mean", "running_var")))
    del probe
    torch_timing.run_variants(
        torch, args, make_model,
        lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=2e-4),
        nn.CrossEntropyLoss(), x_all, y_all,
        model="resnet%d" % (6 * args.n + 2), params=params, trainable_params=trainable)

if __name__ == "__main__":
    main()
