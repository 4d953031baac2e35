-- Benchmark: trains ResNet-20 (models/resnet_cifar.lua, shortcut option B) at
-- batch 128 (--batch-size) with SGD lr 0.1, momentum 0.9, weight decay 2e-4
-- for a fixed number of steps after a warm-up, and prints one JSON line with
-- images/s, the mean step time and where it ran (device, gpu_name).
-- The data: a CIFAR-10 directory (data_batch_*.bin), by default one of
-- random images that tools/bench/resnet20.sh writes with
-- tests/data/make_cifar10.py; pixels scaled to [0, 1], shuffled, no
-- augmentation (the PyTorch peer, tools/bench/resnet20_torch.py, has none).
--   drun --threads N tools/bench/resnet20_bench.lua --dir build/bench/cifar10-noise --steps 50 --warmup 5
--   drun --device cuda tools/bench/resnet20_bench.lua --dir build/bench/cifar10-noise --steps 200 --warmup 20
local drun = require 'drun'
local resnet = require 'resnet_cifar'

local opt = drun.args{steps = 50, warmup = 5, batch_size = 128, seed = 1, dir = '', n = 3,
                     precision = 'float32',  -- or mixed_float16, mixed_bfloat16 (a GPU's)
                     cuda_graphs = true}  -- --cuda-graphs=false: a GPU's steps kernel by kernel

local model = resnet{n = opt.n, seed = opt.seed}
model:compile{optimizer = drun.optim.SGD{learning_rate = 0.1, momentum = 0.9, weight_decay = 2e-4},
              loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
              metrics = {'accuracy'}, precision = opt.precision,
              cuda_graphs = opt.cuda_graphs}

local images = drun.data.cifar10{split = 'train', dir = opt.dir ~= '' and opt.dir or nil}
-- Enough passes over a small directory for warm-up and timed steps.
local size = images:size()
local passes = size > 0 and math.ceil(math.max(opt.steps, opt.warmup, 1) * opt.batch_size / size) or 1
local function input(steps)
  return images:scale(1 / 255):shuffle{seed = opt.seed}:repeated(passes)
    :batch{size = opt.batch_size, drop_remainder = true}:take(steps):prefetch(2)
end

if opt.warmup > 0 then model:fit{x = input(opt.warmup), epochs = 1} end
local r = model:fit{x = input(opt.steps), epochs = 1}

local json_string = require('bench_json').string
local ctx = drun.context()
print(string.format('{"framework": "drun", "model": "resnet%d", "precision": %s, "threads": %d, "batch": %d, "steps": %d, '
                    .. '"images_per_sec": %.1f, "step_ms": %.4f, "final_loss": %.4f, "params": %d, '
                    .. '"graph_steps": %d, "device": %s, "gpu_name": %s}',
                    6 * opt.n + 2, json_string(opt.precision), ctx.threads, opt.batch_size, opt.steps,
                    r.train.images_per_sec,
                    r.train.images_per_sec > 0 and 1000 * opt.batch_size / r.train.images_per_sec or 0,
                    r.train.loss, model:count_params(), r.cuda_graphs and r.cuda_graphs.graph_steps or 0,
                    json_string(ctx.device or 'cpu'), json_string(ctx.gpu_name)))
