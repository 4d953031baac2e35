-- drun.RunConfig, drun.Estimator and drun.Experiment, after tf.estimator and
-- tf.contrib.learn: a RunConfig says where and how often to write
-- (checkpoints, summaries); an Estimator binds a model to its loss, optimizer,
-- metrics and RunConfig; an Experiment runs it on its inputs under a
-- strategy. Every rank runs the same script: parameter servers serve, workers
-- train, the chief also checkpoints and writes summaries. A model_dir holding
-- checkpoints is resumed from.
local core = require 'drun.core'
local util = require 'drun.util'
local hooks = require 'drun.hooks'

local M = {}

-- model_dir defaults to <DRUN_OUTPUT_ROOT or 'runs'>/<EXPERIMENT_ID or JOB_NAME>
-- when one of those is set, as on the Power cluster.
-- As in tf.estimator, a model_dir gets a checkpoint every 600 seconds and after
-- the last step, and TensorBoard summaries every 100 steps, unless told
-- otherwise; 0 turns either off.
M.default_save_checkpoints_secs = 600
M.default_save_summary_steps = 100

function M.RunConfig(opts)
  opts = opts or {}
  util.check_keys('RunConfig', opts, {'model_dir', 'save_checkpoints_steps', 'save_checkpoints_secs',
                                      'keep_checkpoint_max', 'save_summary_steps', 'histogram_freq',
                                      'timeline'})
  if (opts.save_checkpoints_steps or 0) > 0 and (opts.save_checkpoints_secs or 0) > 0 then
    util.fail('RunConfig: give at most one of save_checkpoints_steps and save_checkpoints_secs')
  end
  local c = util.copy(opts)
  if c.save_checkpoints_steps == nil and c.save_checkpoints_secs == nil then
    c.save_checkpoints_secs = M.default_save_checkpoints_secs
  end
  if c.model_dir == nil then
    local id = os.getenv('EXPERIMENT_ID') or os.getenv('JOB_NAME')
    if id and id ~= '' then c.model_dir = (os.getenv('DRUN_OUTPUT_ROOT') or 'runs') .. '/' .. id end
  end
  c.keep_checkpoint_max = c.keep_checkpoint_max or 5
  c.save_summary_steps = c.save_summary_steps or M.default_save_summary_steps
  c._run_config = true
  return c
end

local Estimator = {}
Estimator.__index = Estimator

function M.Estimator(opts)
  util.check_keys('Estimator', opts, {'model', 'loss', 'optimizer', 'metrics', 'config'})
  if type(opts.model) ~= 'table' or not opts.model._core then util.fail('Estimator: model must be an nn model') end
  if opts.loss == nil then util.fail('Estimator: loss is required') end
  local config = opts.config or {}
  if not config._run_config then config = M.RunConfig(config) end
  local self = setmetatable({model = opts.model, config = config}, Estimator)
  opts.model:compile{optimizer = opts.optimizer, loss = opts.loss, metrics = opts.metrics}
  return self
end

-- estimator:train{input = ds, epochs = 1 | steps = N, hooks = {...}, callbacks = {...},
--                 eval_input = ds, strategy = ...}
function Estimator:train(opts)
  util.check_keys('Estimator:train', opts, {'input', 'epochs', 'steps', 'eval_input', 'model_dir', 'hooks', 'strategy',
                                           'eval_every_steps', 'eval_steps', 'callbacks'})
  local c = self.config
  local fit = {x = opts.input, epochs = opts.epochs, steps = opts.steps, strategy = opts.strategy,
               validation_data = opts.eval_input, model_dir = opts.model_dir or c.model_dir,
               save_checkpoints_steps = c.save_checkpoints_steps,
               save_checkpoints_secs = c.save_checkpoints_secs,
               keep_checkpoint_max = c.keep_checkpoint_max,
               save_summary_steps = c.save_summary_steps, histogram_freq = c.histogram_freq,
               timeline = c.timeline,
               eval_every_steps = opts.eval_every_steps, eval_steps = opts.eval_steps,
               callbacks = opts.callbacks}
  fit.hooks = hooks.split(opts.hooks, fit)
  return self.model:fit(fit)
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
                                       'train_steps', 'model_dir', 'hooks', 'delay_workers_by_global_step',
                                       'eval_every_steps', 'eval_every_epochs', 'eval_steps', 'callbacks'})
  if opts.eval_every_epochs ~= nil and opts.eval_every_epochs ~= 1 then
    util.fail('Experiment: eval_every_epochs must be 1 (evaluation follows every epoch); use eval_every_steps for more')
  end
  if getmetatable(opts.estimator) ~= Estimator then util.fail('Experiment: estimator must be a drun.Estimator') end
  if opts.train_input == nil then util.fail('Experiment: train_input is required') end
  return setmetatable(util.copy(opts), Experiment)
end

-- Trains, evaluating after each epoch; returns what summary.json holds (on a
-- parameter server: what it served).
-- With delay_workers_by_global_step = d, worker k (TF_CONFIG's "worker" k;
-- the chief is not delayed) starts once the servers have applied (k + 1) * d
-- updates, as tf.contrib.learn's Experiment does.
function Experiment:run()
  local list = util.copy(self.hooks or {})
  local c = core.context()
  if self.delay_workers_by_global_step and c.role == 'worker' then
    list[#list + 1] = hooks.GlobalStepWaiterHook{
      wait_until_step = (c.task_index + 1) * self.delay_workers_by_global_step}
  end
  return self.estimator:train{input = self.train_input, eval_input = self.eval_input, strategy = self.strategy,
                              epochs = self.epochs, steps = self.train_steps, model_dir = self.model_dir,
                              hooks = list, eval_every_steps = self.eval_every_steps,
                              eval_steps = self.eval_steps, callbacks = self.callbacks}
end
Experiment.train_and_evaluate = Experiment.run

return M
