-- ResNet-56 on CIFAR-10 with the settings of PyTorch Ignite's CIFAR-10 demo and
-- He et al. 2015 (section 4.2): batch 128 per worker, 182 epochs, SGD with
-- momentum 0.9 and weight decay 2e-4 (on kernels), learning rate 0.1 divided
-- by 10 after epochs 91 and 136, pad-4-and-crop plus left-right flip
-- augmentation, per-image standardisation, evaluation after every epoch.
--
--   drun --data-dir DIR scripts/cifar10_resnet56.lua                   # ResNet-56, one process
--   drun -np 4 --data-dir DIR scripts/cifar10_resnet56.lua --depth 20  # ResNet-20, AllReduce
--   drun -np 4 scripts/cifar10_resnet56.lua --strategy ps_async --model-dir runs/r56-async
--
-- DIR holds data_batch_1..5.bin and test_batch.bin (the CIFAR-10 binary
-- version; also found in DIR/cifar-10-batches-bin); DRUN_DATA_DIR works too.
-- With several workers each loads only its own contiguous part of the
-- training set. `--help` lists the options, with their defaults.
-- The learning-rate boundaries are in the applying optimizer's steps: one per
-- worker step for AllReduce, the synchronous and the worker-side strategies,
-- one per push (workers x steps) for ps_async and dyn_sgd.
local drun = require 'drun'
local resnet = require 'resnet_cifar'
local data, optim = drun.data, drun.optim

-- Strategies whose servers apply every worker's gradient as one update.
local per_push = {ps_async = true, dyn_sgd = true}

local opt = drun.args{
  depth = {56, '6n+2: 20, 32, 44, 56 or 110 (shortcut option B; see models/resnet_cifar.lua)'},
  epochs = {182, 'passes over the training data'},
  batch_size = {128, 'examples per step on each worker'},
  lr = {0.1, 'learning rate of SGD'},
  momentum = {0.9, 'momentum of SGD'},
  -- The recipe's L2 of 2e-4 on the gradient, through momentum 0.9, shrank
  -- the weights by lr * 2e-4 / (1 - 0.9) a step: the same decoupled.
  weight_decay = {2e-3, "Keras' decoupled decay of every variable: w -= lr * weight_decay * w"},
  decay_epochs = {'91,136', 'epochs after which the rate is divided by --decay-factor'},
  decay_factor = {10, 'what the rate is divided by at each of --decay-epochs'},
  warmup_epochs = {0, 'linear warm-up from 0 (Goyal et al. 2017; useful with --scale-lr)'},
  strategy = {'all_reduce', 'any of drun.strategy.by_name'},
  scale_lr = {true, 'multiply the rate by the number of workers (all_reduce, ps_sync, sync_sgd)'},
  train_limit = {0, 'the first N training examples, in all (0: all 50000)'},
  eval_limit = {0, 'evaluate on the first N test examples (0: all 10000)'},
  eval_batch_size = {1000, 'examples per evaluation step'},
  steps = {0, 'stop at this global step (0: run the epochs)'},
  model_dir = {'runs/cifar10_resnet56', 'checkpoints, TensorBoard events, summary.json; resumed from'},
  save = {'', 'write the trained model to this Keras HDF5 file (by the chief)'},
  seed = {1, 'seed of the weights, shuffling and augmentation'},
  data_dir = {'', "where the CIFAR-10 files are (as drun's own --data-dir)"},
  save_checkpoints_steps = {0, 'a checkpoint every N steps instead of every --save-checkpoints-secs'},
  save_checkpoints_secs = {600, 'a checkpoint every S seconds and at the end (0 and no steps: none)'},
  save_summary_steps = {100, 'TensorBoard scalars every N steps (0: none)'},
}

-- The model first: a wrong --depth fails before the data are read.
local model = resnet{depth = opt.depth, seed = opt.seed}
if drun.is_chief() then model:summary() end

-- --data-dir after the script is the script's; before it, drun's (DRUN_DATA_DIR).
local data_dir = opt.data_dir ~= '' and opt.data_dir or nil
local workers = drun.context().workers
local sharded = workers > 1

-- Training input: this worker's examples, augmented, shuffled, batched.
local train = data.cifar10{split = 'train', shard = sharded, dir = data_dir}
local per_worker  -- examples one worker trains on per epoch
if opt.train_limit > 0 then
  if sharded then  -- the loader sharded already: take this worker's share of the limit
    local share = math.floor(opt.train_limit / workers)
    train = train:take(share)
    per_worker = math.min(share, train:size())
  else
    train = train:take(opt.train_limit)
    per_worker = math.floor(math.min(opt.train_limit, train:size()) / workers)
  end
else
  per_worker = sharded and train:size() or math.floor(train:size() / workers)
end
-- Whole batches only (as the Ignite demo's drop_last), unless there is less than one.
local drop = per_worker >= opt.batch_size
local steps_per_epoch = drop and math.floor(per_worker / opt.batch_size) or (per_worker > 0 and 1 or 0)
train = train:augment{crop_padding = 4, flip = true, standardize = true, seed = opt.seed}
  :shuffle{seed = opt.seed}
  :batch{size = opt.batch_size, drop_remainder = drop}
  :prefetch(2)

local test = data.cifar10{split = 'test', dir = data_dir}
if opt.eval_limit > 0 then test = test:take(opt.eval_limit) end
test = test:augment{standardize = true}:batch(opt.eval_batch_size)

-- Learning rate: piecewise constant over epochs, in the applying optimizer's steps.
local updates_per_epoch = steps_per_epoch * (per_push[opt.strategy] and workers or 1)
local boundaries, values = {}, {opt.lr}
for e in opt.decay_epochs:gmatch('[^,%s]+') do
  local epoch = tonumber(e)
  if not epoch or epoch < 0 then
    drun.core.fail('--decay-epochs: expected epochs separated by commas, got "' .. opt.decay_epochs .. '"')
  end
  -- Keras' PiecewiseConstantDecay keeps values[i] while step <= boundaries[i]; the
  -- first update of epoch `epoch` (0-based step epoch * updates_per_epoch) takes the next.
  boundaries[#boundaries + 1] = math.max(0, epoch * updates_per_epoch - 1)
  values[#values + 1] = values[#values] / opt.decay_factor
end
local learning_rate = #boundaries > 0
  and optim.schedules.PiecewiseConstantDecay{boundaries = boundaries, values = values}
  or opt.lr
if opt.warmup_epochs > 0 then
  learning_rate = optim.schedules.LinearWarmup{
    after_warmup_lr_sched = learning_rate,
    warmup_steps = math.max(1, math.floor(opt.warmup_epochs * updates_per_epoch))}
end

if drun.is_chief() and not drun.context().plan then
  print(string.format('ResNet-%d: %d workers, %d examples and %d steps of batch %d per worker and epoch; '
                      .. 'learning rate %s, divided by %s at optimizer steps {%s}',
                      opt.depth, workers, per_worker, steps_per_epoch, opt.batch_size, tostring(opt.lr),
                      tostring(opt.decay_factor), table.concat(boundaries, ', ')))
end

local estimator = drun.Estimator{
  model = model,
  loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
  optimizer = optim.SGD{learning_rate = learning_rate, momentum = opt.momentum,
                        weight_decay = opt.weight_decay},
  metrics = {'accuracy'},
  config = drun.RunConfig{
    model_dir = opt.model_dir ~= '' and opt.model_dir or nil,
    -- a checkpoint every --save-checkpoints-steps steps, else every --save-checkpoints-secs
    save_checkpoints_steps = opt.save_checkpoints_steps > 0 and opt.save_checkpoints_steps or nil,
    save_checkpoints_secs = (opt.save_checkpoints_steps <= 0 and opt.save_checkpoints_secs > 0)
                            and opt.save_checkpoints_secs or nil,
    save_summary_steps = opt.save_summary_steps,
  },
}

local result = drun.Experiment{
  estimator = estimator,
  strategy = drun.strategy.from_args(opt.strategy, opt.scale_lr),
  train_input = train,
  eval_input = test,
  epochs = opt.epochs,
  train_steps = opt.steps > 0 and opt.steps or nil,
}:run()

if opt.save ~= '' then model:save(opt.save) end  -- Keras HDF5, from the chief
if drun.is_chief() and result.eval then
  print(string.format('ResNet-%d: test accuracy %.4f (error %.2f %%), test loss %.4f, %.0f images/s',
                      opt.depth, result.eval.accuracy, 100 * (1 - result.eval.accuracy), result.eval.loss,
                      result.train.images_per_sec))
end
return result
