-- Every hook on a tiny problem: 64 points, batch 16 (4 steps an epoch).
-- Prints one line per check for run_lua_tests.py; `--case nan` diverges on
-- purpose so that NanGuard stops it.
local drun = require 'drun'
local nn, data, optim, hooks = drun.nn, drun.data, drun.optim, drun.hooks
local opt = drun.args{case = 'all', model_dir = ''}

local ds = require('toy_points')()

local function estimator(lr)
  return drun.Estimator{
    model = nn.Sequential{nn.Dense{units = 8, activation = 'relu', input_shape = {2}}, nn.Dense{units = 2}, seed = 3},
    loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
    optimizer = optim.SGD{learning_rate = lr},
    metrics = {'accuracy'},
    -- No checkpoints nor summaries of their own: each train below starts afresh in one model_dir.
    config = drun.RunConfig{model_dir = opt.model_dir ~= '' and opt.model_dir or nil, save_checkpoints_secs = 0,
                            save_summary_steps = 0},
  }
end

if opt.case == 'eval' then  -- evaluation every 3 steps and after each epoch, on 1 batch
  local r = drun.Experiment{estimator = estimator(0.1), train_input = ds:batch(16), eval_input = ds:batch(16),
                            epochs = 2, eval_every_steps = 3, eval_steps = 1}:run()
  print(string.format('eval examples %d', r.eval.examples))
  return
end

if opt.case == 'nan' then
  estimator(1e30):train{input = ds:batch(16), epochs = 50, hooks = {hooks.NanGuard{}}}
  return
end

-- A hook written in Lua: sees every step, in order, and stops at step 6.
local seen = {}
local mine = {
  begin = function(self) self.began = true end,
  before_step = function(self, step) seen[#seen + 1] = 'before ' .. step end,
  after_step = function(self, info)
    seen[#seen + 1] = string.format('after %d', info.step)
    self.last_loss = info.metrics.loss
    return info.step >= 6
  end,
  end_ = function(self, result) self.final_step = result.global_step end,
}
local r = estimator(0.1):train{input = ds:batch(16), epochs = 50, hooks = {mine}}
print('lua hook: began', mine.began, 'steps', table.concat(seen, ','), 'final', mine.final_step,
      'global_step', r.global_step, 'stopped_by_hook', r.stopped_by_hook)

local stop_last = hooks.StopAtStepHook{last_step = 9}
r = estimator(0.1):train{input = ds:batch(16), epochs = 50, hooks = {stop_last}}
print('StopAtStepHook last_step: global_step', r.global_step)
r = estimator(0.1):train{input = ds:batch(16), epochs = 50, hooks = {hooks.StopAtStepHook{num_steps = 5}}}
print('StopAtStepHook num_steps: global_step', r.global_step)

local logging = hooks.LoggingHook{tensors = {'loss', 'accuracy'}, every_n_steps = 4}
local counter = hooks.StepCounterHook{every_n_steps = 4}
local final = hooks.FinalOpsHook{fn = function(result) return result.train.accuracy end}
r = estimator(0.1):train{input = ds:batch(16), epochs = 3, hooks = {logging, counter, final}}
print('LoggingHook lines', #logging.lines)
print('StepCounterHook rates', #counter.rates, 'positive', counter.rates[1].steps_per_sec > 0)
print('FinalOpsHook value', final.value == r.train.accuracy, 'accuracy', final.value)

if opt.model_dir ~= '' then
  r = estimator(0.1):train{input = ds:batch(16), epochs = 3,
                          hooks = {hooks.CheckpointSaverHook{save_steps = 5}, hooks.SummarySaverHook{save_steps = 2}}}
  print('saver hooks: global_step', r.global_step)
end
