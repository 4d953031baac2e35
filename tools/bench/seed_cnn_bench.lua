-- Benchmark: trains the seed CNN on Fashion-MNIST at batch 64 (--batch-size)
-- for a fixed number of steps after a warm-up, and prints one JSON line with
-- images/s, the mean step time and where it ran (device, gpu_name).
--   drun --threads N tools/bench/seed_cnn_bench.lua --steps 300 --warmup 20
--   drun --device cuda tools/bench/seed_cnn_bench.lua --batch-size 256 --steps 200 --warmup 20
-- With several workers (drun -np N) the gradients go through AllReduce, summed
-- in node-shared memory unless --shared-memory=false (MPI_Iallreduce), in
-- buckets of --bucket-kib (default 4096, AllReduce's); --strategy ps_sync
-- trains with synchronous parameter servers instead (drun adds one a node).
local drun = require 'drun'
local seed_cnn = require 'seed_cnn'

local opt = drun.args{steps = 300, warmup = 20, batch_size = 64, seed = 1, shared_memory = true,
                     bucket_kib = 4096, strategy = {'all_reduce', 'all_reduce or ps_sync'},
                     precision = 'float32',  -- or mixed_float16, mixed_bfloat16 (a GPU's)
                     cuda_graphs = true}  -- --cuda-graphs=false: a GPU's steps kernel by kernel
local strategy = opt.strategy == 'ps_sync' and drun.strategy.ParameterServer{mode = 'sync'}
                 or drun.strategy.AllReduce{shared_memory = opt.shared_memory,
                                            bucket_bytes = opt.bucket_kib * 1024}

local model = seed_cnn{seed = opt.seed}
model:compile{optimizer = drun.optim.SGD{learning_rate = 0.01, momentum = 0.9},
              loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
              metrics = {'accuracy'}, precision = opt.precision,
              cuda_graphs = opt.cuda_graphs}

local images = drun.data.fashion_mnist{split = 'train'}:shuffle{seed = opt.seed}
-- More steps than one pass holds (60,000 images, split between the workers:
-- 234 steps at batch 256 for one) go round again, so that --steps is what is
-- timed; where one pass is enough the input is left as it was.
local ctx = drun.context()
local size = images:size()
local passes = size > 0 and math.ceil(math.max(opt.steps, opt.warmup, 1) * opt.batch_size
                                      * (ctx.workers or 1) / size) or 1
if passes > 1 then images = images:repeated(passes) end
local train = images:batch(opt.batch_size):prefetch(2)
if opt.warmup > 0 then model:fit{x = train:take(opt.warmup), epochs = 1, strategy = strategy} end
local r = model:fit{x = train:take(opt.steps), epochs = 1, strategy = strategy}
if not r.train then return end  -- a parameter server: it trains nothing, reports nothing

local json_string = require('bench_json').string
-- images/s counts every worker's images; a step is one batch on each.
local step_ms = r.train.images_per_sec > 0
  and 1000 * opt.batch_size * (r.workers or 1) / r.train.images_per_sec or 0
print(string.format('{"framework": "drun", "precision": %s, "threads": %d, "batch": %d, "steps": %d, "images_per_sec": %.1f, '
                    .. '"step_ms": %.4f, "final_loss": %.4f, "graph_steps": %d, "device": %s, "gpu_name": %s}',
                    json_string(opt.precision), ctx.threads, opt.batch_size, opt.steps, r.train.images_per_sec,
                    step_ms, r.train.loss, r.cuda_graphs and r.cuda_graphs.graph_steps or 0,
                    json_string(ctx.device or 'cpu'), json_string(ctx.gpu_name)))
