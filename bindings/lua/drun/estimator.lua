-- drun.Estimator and drun.Experiment, after tf.estimator: an Estimator binds a
-- model to its loss, optimizer and metrics; an Experiment runs it on its
-- inputs under a strategy. In one process the Experiment trains locally.
local core = require 'drun.core'
local util = require 'drun.util'

local M = {}

local Estimator = {}
Estimator.__index = Estimator

function M.Estimator(opts)
  util.check_keys('Estimator', opts, {'model', 'loss', 'optimizer', 'metrics', 'config'})
  if type(opts.model) ~= 'table' or not opts.model._core then util.fail('Estimator: model must be an nn model') end
  if opts.loss == nil then util.fail('Estimator: loss is required') end
  local self = setmetatable({model = opts.model, config = opts.config or {}}, Estimator)
  opts.model:compile{optimizer = opts.optimizer, loss = opts.loss, metrics = opts.metrics}
  return self
end

-- estimator:train{input = ds, epochs = 1 | steps = N, eval_input = ds, model_dir = ...}
function Estimator:train(opts)
  util.check_keys('Estimator:train', opts, {'input', 'epochs', 'steps', 'eval_input', 'model_dir', 'hooks', 'strategy'})
  if opts.hooks and #opts.hooks > 0 then util.fail('Estimator:train: hooks are not supported yet') end
  return self.model:fit{x = opts.input, epochs = opts.epochs, steps = opts.steps, strategy = opts.strategy,
                        validation_data = opts.eval_input, model_dir = opts.model_dir or self.config.model_dir}
end

function Estimator:evaluate(opts)
  util.check_keys('Estimator:evaluate', opts, {'input', 'steps'})
  return self.model:evaluate(opts.input, {steps = opts.steps})
end

function Estimator:predict(opts)
  util.check_keys('Estimator:predict', opts, {'input'})
  return self.model:predict(opts.input)
end

local Experiment = {}
Experiment.__index = Experiment

function M.Experiment(opts)
  util.check_keys('Experiment', opts, {'estimator', 'strategy', 'train_input', 'eval_input', 'epochs',
                                       'train_steps', 'model_dir', 'hooks'})
  if getmetatable(opts.estimator) ~= Estimator then util.fail('Experiment: estimator must be a drun.Estimator') end
  if opts.train_input == nil then util.fail('Experiment: train_input is required') end
  if opts.hooks and #opts.hooks > 0 then util.fail('Experiment: hooks are not supported yet') end
  return setmetatable(util.copy(opts), Experiment)
end

-- Trains, evaluating after each epoch; returns what summary.json holds.
function Experiment:run()
  return self.estimator:train{input = self.train_input, eval_input = self.eval_input, strategy = self.strategy,
                              epochs = self.epochs, steps = self.train_steps, model_dir = self.model_dir}
end

return M
