-- The seed CNN on Fashion-MNIST (Debian's dataset-fashion-mnist):
-- Conv2D 32 3x3 relu, MaxPool 2, Flatten, Dense 64 relu, Dense 10 logits;
-- SGD with momentum 0.9, learning rate 0.01, batch 64, 3 epochs.
--   drun scripts/fashion_mnist.lua --epochs 3 --model-dir runs/fashion
local drun = require 'drun'
local seed_cnn = require 'seed_cnn'
local data, optim = drun.data, drun.optim

local opt = drun.args{epochs = 3, batch_size = 64, lr = 0.01, model_dir = 'runs/fashion_mnist',
                      train_limit = 0, seed = 42, strategy = 'all_reduce', scale_lr = true}

local train = data.fashion_mnist{split = 'train'}
if opt.train_limit > 0 then train = train:take(opt.train_limit) end
local test = data.fashion_mnist{split = 'test'}

local model = seed_cnn{seed = opt.seed}
if drun.is_chief() then model:summary() end

local estimator = drun.Estimator{
  model = model,
  loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
  optimizer = optim.SGD{learning_rate = opt.lr, momentum = 0.9},
  metrics = {'accuracy'},
}

local strategies = {all_reduce = drun.strategy.AllReduce}
local strategy = strategies[opt.strategy]
if not strategy then error('unknown --strategy ' .. opt.strategy .. '; available: all_reduce') end

local result = drun.Experiment{
  estimator = estimator,
  strategy = strategy{scale_lr = opt.scale_lr},
  train_input = train:shuffle{seed = opt.seed}:batch(opt.batch_size):prefetch(2),
  eval_input = test:batch(1000),
  epochs = opt.epochs,
  model_dir = opt.model_dir,
}:run()

if drun.is_chief() and result.eval then
  print(string.format('test accuracy %.4f, test loss %.4f, %.0f images/s',
                      result.eval.accuracy, result.eval.loss, result.train.images_per_sec))
end
