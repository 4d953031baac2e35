-- The small CNN of Keras' cifar10_cnn example, as Horovod's CIFAR-10 demo
-- trains it data-parallel:
--   Conv2D 32 3x3 same relu, Conv2D 32 3x3 relu, MaxPool 2, Dropout 0.25,
--   Conv2D 64 3x3 same relu, Conv2D 64 3x3 relu, MaxPool 2, Dropout 0.25,
--   Flatten, Dense 512 relu, Dropout 0.5, Dense 10, softmax
-- (1,250,858 parameters), categorical cross-entropy, RMSprop. Keras' example
-- uses RMSprop(learning_rate=1e-4, decay=1e-6) and Horovod's version scales
-- the rate by the number of workers; here RMSprop at learning rate 3e-4 (the
-- rate the issue names), Keras' legacy decay 1e-6, and --scale-lr (default
-- true) multiplies it by the number of workers for the averaging strategies
-- (all_reduce, ps_sync, sync_sgd) as Horovod does. Batch 32 per worker,
-- pixels / 255, and, as the example's ImageDataGenerator (shifts of 0.1 and
-- horizontal flips), random crops of the image padded by 3 and left-right
-- flips (--augment=false turns them off).
--
--   drun --data-dir DIR scripts/cifar10_cnn.lua --epochs 50
--   drun -np 4 --data-dir DIR scripts/cifar10_cnn.lua --strategy all_reduce
--
-- DIR holds data_batch_1..5.bin and test_batch.bin (or DRUN_DATA_DIR).
-- `--help` lists the options, with their defaults.
local drun = require 'drun'
local nn, data, optim = drun.nn, drun.data, drun.optim

local opt = drun.args{
  batch_size = {32, 'examples per step on each worker'},
  epochs = {100, 'passes over the training data'},
  lr = {3e-4, 'learning rate of RMSprop'},
  decay = {1e-6, "Keras' legacy learning-rate decay"},
  strategy = {'all_reduce', 'any of drun.strategy.by_name'},
  scale_lr = {true, 'multiply the rate by the number of workers (all_reduce, ps_sync, sync_sgd)'},
  save_dir = {'saved_models', 'the model directory (checkpoints, events, summary.json); the trained '
                              .. 'model goes to <save-dir>/keras_cifar10_trained_model.h5'},
  train_limit = {0, 'the first N training examples, in all (0: all)'},
  eval_limit = {0, 'evaluate on the first N test examples (0: all)'},
  steps = {0, 'stop at this global step (0: run the epochs)'},
  augment = {true, 'random crops of the image padded by 3 and left-right flips'},
  seed = {1, 'seed of the weights, shuffling and augmentation'},
  data_dir = {'', "where the CIFAR-10 files are (as drun's own --data-dir)"},
}

-- --data-dir after the script is the script's; before it, drun's (DRUN_DATA_DIR).
local data_dir = opt.data_dir ~= '' and opt.data_dir or nil
local workers = drun.context().workers
local sharded = workers > 1

local train = data.cifar10{split = 'train', shard = sharded, dir = data_dir}
if opt.train_limit > 0 then
  train = train:take(sharded and math.floor(opt.train_limit / workers) or opt.train_limit)
end
train = train:scale(1 / 255)
if opt.augment then train = train:augment{crop_padding = 3, flip = true, seed = opt.seed} end
train = train:shuffle{seed = opt.seed}:batch(opt.batch_size):prefetch(2)

local test = data.cifar10{split = 'test', dir = data_dir}
if opt.eval_limit > 0 then test = test:take(opt.eval_limit) end
test = test:scale(1 / 255):batch(1000)

local model = nn.Sequential{
  nn.Conv2D{filters = 32, kernel_size = 3, padding = 'same', activation = 'relu', input_shape = {32, 32, 3}},
  nn.Conv2D{filters = 32, kernel_size = 3, activation = 'relu'},
  nn.MaxPool2D{pool_size = 2},
  nn.Dropout{rate = 0.25},
  nn.Conv2D{filters = 64, kernel_size = 3, padding = 'same', activation = 'relu'},
  nn.Conv2D{filters = 64, kernel_size = 3, activation = 'relu'},
  nn.MaxPool2D{pool_size = 2},
  nn.Dropout{rate = 0.25},
  nn.Flatten{},
  nn.Dense{units = 512, activation = 'relu'},
  nn.Dropout{rate = 0.5},
  nn.Dense{units = 10},
  nn.Activation{activation = 'softmax'},
  name = 'cifar10_cnn', seed = opt.seed,
}
if drun.is_chief() then model:summary() end

local estimator = drun.Estimator{
  model = model,
  loss = drun.losses.SparseCategoricalCrossentropy{},  -- on the softmax's probabilities, as Keras' example
  optimizer = optim.RMSprop{learning_rate = opt.lr, decay = opt.decay},
  metrics = {'accuracy'},
  config = drun.RunConfig{model_dir = opt.save_dir ~= '' and opt.save_dir or nil},
}

local result = drun.Experiment{
  estimator = estimator,
  strategy = drun.strategy.from_args(opt.strategy, opt.scale_lr),
  train_input = train,
  eval_input = test,
  epochs = opt.epochs,
  train_steps = opt.steps > 0 and opt.steps or nil,
}:run()

if opt.save_dir ~= '' then
  local path = opt.save_dir .. '/keras_cifar10_trained_model.h5'
  model:save(path)  -- Keras HDF5, from the chief
  if drun.is_chief() then print('Saved trained model at ' .. path) end
end
if drun.is_chief() and result.eval then
  print(string.format('Test loss: %.4f', result.eval.loss))
  print(string.format('Test accuracy: %.4f', result.eval.accuracy))
end
return result
