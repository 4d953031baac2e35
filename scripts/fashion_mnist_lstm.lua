-- Fashion-MNIST read row by row by an LSTM, as Keras' MNIST-LSTM example:
-- each 28x28 image is a sequence of 28 rows of 28 pixels; LSTM(128), then a
-- Dense of 10 logits; Adam (learning rate 0.001), batch 64.
--   drun scripts/fashion_mnist_lstm.lua --epochs 3
--   drun -np 2 scripts/fashion_mnist_lstm.lua
local drun = require 'drun'
local nn, data = drun.nn, drun.data

local opt = drun.args{
  epochs = {3, 'passes over the training data'},
  batch_size = {64, 'examples per step on each worker'},
  lr = {0.001, 'learning rate of Adam'},
  units = {128, 'LSTM units'},
  train_limit = {0, 'train on the first N training examples only (0: all 60000)'},
  eval_limit = {0, 'evaluate on the first N test examples only (0: all 10000)'},
  model_dir = {'runs/fashion_mnist_lstm', 'checkpoints and summary.json; a rerun resumes'},
  seed = {42, 'seed of the weights and of the shuffling'},
}

local model = nn.Sequential{
  nn.Reshape{{28, 28}, input_shape = {28, 28, 1}},  -- rows as steps
  nn.LSTM(opt.units),
  nn.Dense(10),
  seed = opt.seed,
}
if drun.is_chief() then model:summary() end

local train = data.fashion_mnist{split = 'train'}
if opt.train_limit > 0 then train = train:take(opt.train_limit) end
local test = data.fashion_mnist{split = 'test'}
if opt.eval_limit > 0 then test = test:take(opt.eval_limit) end

local result = drun.Experiment{
  estimator = drun.Estimator{
    model = model,
    loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
    optimizer = drun.optim.Adam{learning_rate = opt.lr},
    metrics = {'accuracy'},
    config = drun.RunConfig{model_dir = opt.model_dir},
  },
  train_input = train:shuffle{seed = opt.seed}:batch(opt.batch_size):prefetch(2),
  eval_input = test:batch(1000),
  epochs = opt.epochs,
}:run()

if drun.is_chief() and result.eval then
  print(string.format('test accuracy %.4f, test loss %.4f, %.0f img/s', result.eval.accuracy,
                      result.eval.loss, result.train.images_per_sec))
end
return result
