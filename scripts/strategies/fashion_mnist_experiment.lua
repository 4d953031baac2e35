-- The seed CNN on Fashion-MNIST under any strategy: what scripts/fashion_mnist.lua
-- and every scripts/strategies/*.lua run. Command-line options (--epochs,
-- --steps, --batch-size, --lr, --model-dir, --train-limit, --seed, --strategy,
-- --scale-lr, --save-checkpoints-steps, --save-summary-steps, --nan-guard,
-- --delay-workers-by-global-step, --save m.h5)
-- override the caller's defaults; `strategy_options` are the strategy's own
-- parameters, named as in its paper. A model directory holding checkpoints is
-- resumed from.
local drun = require 'drun'
local seed_cnn = require 'seed_cnn'
local data, optim = drun.data, drun.optim

return function(defaults, strategy_options)
  local settings = {epochs = 3, batch_size = 64, lr = 0.01, model_dir = 'runs/fashion_mnist',
                    train_limit = 0, seed = 42, strategy = 'all_reduce', scale_lr = true,
                    steps = 0, save_checkpoints_steps = 0, save_summary_steps = 0, nan_guard = false,
                    delay_workers_by_global_step = 0, save = ''}
  for k, v in pairs(defaults or {}) do settings[k] = v end
  local opt = drun.args(settings)

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
    config = drun.RunConfig{
      model_dir = opt.model_dir,
      save_checkpoints_steps = opt.save_checkpoints_steps > 0 and opt.save_checkpoints_steps or nil,
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
    print(string.format('test accuracy %.4f, test loss %.4f, %.0f images/s',
                        result.eval.accuracy, result.eval.loss, result.train.images_per_sec))
  end
  return result
end
