-- Benchmark: trains the seed CNN on Fashion-MNIST at batch 64 for a fixed
-- number of steps after a warm-up, and prints one JSON line with images/s.
--   drun --threads N tools/bench/seed_cnn_bench.lua --steps 300 --warmup 20
-- With several workers (drun -np N) the gradients go through AllReduce, summed
-- in node-shared memory unless --shared-memory=false (MPI_Iallreduce).
local drun = require 'drun'
local seed_cnn = require 'seed_cnn'

local opt = drun.args{steps = 300, warmup = 20, batch_size = 64, seed = 1, shared_memory = true}
local strategy = drun.strategy.AllReduce{shared_memory = opt.shared_memory}

local model = seed_cnn{seed = opt.seed}
model:compile{optimizer = drun.optim.SGD{learning_rate = 0.01, momentum = 0.9},
              loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
              metrics = {'accuracy'}}

local train = drun.data.fashion_mnist{split = 'train'}:shuffle{seed = opt.seed}
  :batch(opt.batch_size):prefetch(2)
if opt.warmup > 0 then model:fit{x = train:take(opt.warmup), epochs = 1, strategy = strategy} end
local r = model:fit{x = train:take(opt.steps), epochs = 1, strategy = strategy}
print(string.format('{"framework": "drun", "threads": %d, "batch": %d, "steps": %d, "images_per_sec": %.1f, "final_loss": %.4f}',
                    drun.context().threads, opt.batch_size, opt.steps, r.train.images_per_sec, r.train.loss))
