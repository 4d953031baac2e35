-- The seed CNN on Fashion-MNIST under any strategy: what scripts/fashion_mnist.lua
-- and every scripts/strategies/*.lua run. Command-line options (`--help`
-- lists them) override the caller's defaults; `strategy_options` are the
-- strategy's own parameters, named as in its paper. As with tf.estimator, the
-- model directory gets a checkpoint every 600 s and at the end, and
-- TensorBoard summaries every 100 steps; a model directory holding
-- checkpoints is resumed from.
local drun = require 'drun'
local seed_cnn = require 'seed_cnn'
local data, optim = drun.data, drun.optim

-- {default, description} of each option.
local options = {
  epochs = {3, 'passes over the training data'},
  steps = {0, 'stop at this global step instead (0: run the epochs)'},
  batch_size = {64, 'examples per step on each worker'},
  lr = {0.01, 'learning rate of SGD (momentum 0.9)'},
  model_dir = {'', 'checkpoints, summary.json and TensorBoard events; a rerun resumes from it '
                  .. '(default: runs/<script name>, one for each script)'},
  train_limit = {0, 'train on the first N training examples only (0: all 60000)'},
  eval_limit = {0, 'evaluate on the first N test examples only (0: all 10000)'},
  seed = {42, 'seed of the weights and of the shuffling'},
  strategy = {'all_reduce', 'how workers share updates (all_reduce, ps_async, ps_sync, downpour, hogwild, easgd, ...)'},
  scale_lr = {true, 'multiply the learning rate by the number of workers (AllReduce)'},
  save_checkpoints_steps = {0, 'a checkpoint every N steps instead of every --save-checkpoints-secs'},
  save_checkpoints_secs = {600, 'a checkpoint every S seconds and at the end (0 and no steps: no checkpoints)'},
  save_summary_steps = {100, 'TensorBoard scalars every N steps (0: none)'},
  nan_guard = {false, 'stop at the first step whose loss or output is not finite'},
  delay_workers_by_global_step = {0, 'worker k starts once the servers have applied (k + 1) * N updates'},
  save = {'', 'write the trained model to this Keras HDF5 file'},
  precision = {'float32', 'float32, or on a GPU mixed_float16 or mixed_bfloat16 (drun.mixed_precision)'},
}

return function(defaults, strategy_options)
  local settings = {}
  for k, v in pairs(options) do settings[k] = {v[1], v[2]} end
  for k, v in pairs(defaults or {}) do
    if settings[k] then settings[k][1] = v else settings[k] = v end
  end
  local opt = drun.args(settings)
  drun.mixed_precision.set_global_policy(opt.precision)
  if opt.model_dir == '' then
    opt.model_dir = 'runs/' .. ((arg and arg[0] or ''):match('([^/]+)%.lua$') or 'fashion_mnist')
  end

  for _, name in ipairs{'train_limit', 'eval_limit'} do
    if opt[name] < 0 then  -- a usage error like drun.args' own: one line, exit 2
      require('drun.util').usage_error(string.format(
          '--%s: expected 0 (all) or a number of examples, got %s', name:gsub('_', '-'), opt[name]))
    end
  end

  local train = data.fashion_mnist{split = 'train'}
  if opt.train_limit > 0 then train = train:take(opt.train_limit) end
  local test = data.fashion_mnist{split = 'test'}
  if opt.eval_limit > 0 then test = test:take(opt.eval_limit) end

  local model = seed_cnn{seed = opt.seed}
  if drun.is_chief() then model:summary() end

  local estimator = drun.Estimator{
    model = model,
    loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
    optimizer = optim.SGD{learning_rate = opt.lr, momentum = 0.9},
    metrics = {'accuracy'},
    config = drun.RunConfig{
      model_dir = opt.model_dir,
      save_checkpoints_steps = opt.save_checkpoints_steps > 0 and opt.save_checkpoints_steps or nil,
      save_checkpoints_secs = opt.save_checkpoints_steps <= 0 and opt.save_checkpoints_secs or nil,
      save_summary_steps = opt.save_summary_steps,
    },
  }

  local result = drun.Experiment{
    estimator = estimator,
    strategy = drun.strategy.from_args(opt.strategy, opt.scale_lr, strategy_options),
    train_input = train:shuffle{seed = opt.seed}:batch(opt.batch_size):prefetch(2),
    eval_input = test:batch(1000),
    epochs = opt.epochs,
    train_steps = opt.steps > 0 and opt.steps or nil,
    hooks = opt.nan_guard and {drun.hooks.NanGuard{}} or nil,
    delay_workers_by_global_step = opt.delay_workers_by_global_step > 0
                                   and opt.delay_workers_by_global_step or nil,
  }:run()

  if opt.save ~= '' then model:save(opt.save) end  -- Keras HDF5, from the chief
  if drun.is_chief() and result.eval then
    local workers = result.workers or 1
    print(string.format('test accuracy %.4f, test loss %.4f, %.0f img/s%s',
                        result.eval.accuracy, result.eval.loss, result.train.images_per_sec,
                        workers > 1 and string.format(' in all (%d workers)', workers) or ''))
  end
  return result
end
