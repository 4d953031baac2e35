-- drun.hooks: TensorFlow's training hooks. A hook is a table with any of
-- begin(self), before_step(self, step), after_step(self, info) -> stop?,
-- end_(self, result), called by the C++ training loop; info is {step, epoch,
-- loss, learning_rate, batch_size, metrics = {loss = running mean, ...}}.
-- Users write their own hooks the same way. CheckpointSaverHook and
-- SummarySaverHook set the intervals of the loop's own C++ hooks of those
-- names (runtime/train/checkpoint_saver, summary_saver);
-- NanGuard (it inspects the layers' outputs) and GlobalStepWaiterHook (it
-- asks the parameter servers) are C++.
local core = require 'drun.core'
local util = require 'drun.util'

local hooks = {}

local function chief() return core.context().role == 'chief' end

local function positive(what, v)
  if v ~= nil and (type(v) ~= 'number' or v <= 0) then
    util.fail(what .. ' must be a positive number, got ' .. tostring(v))
  end
end

-- Logs the named running values every_n_steps steps (chief only).
function hooks.LoggingHook(opts)
  opts = opts or {}
  util.check_keys('LoggingHook', opts, {'tensors', 'every_n_steps'})
  positive('LoggingHook every_n_steps', opts.every_n_steps)
  local every, names = opts.every_n_steps or 100, opts.tensors or {'loss'}
  return {name = 'LoggingHook', lines = {}, after_step = function(self, info)
    if info.step % every ~= 0 or not chief() then return end
    local parts = {}
    for _, n in ipairs(names) do
      local v = info.metrics[n] or info[n]
      if v == nil then util.fail('LoggingHook: no value named ' .. tostring(n)) end
      parts[#parts + 1] = string.format('%s = %.6g', n, v)
    end
    local line = string.format('step %d: %s', info.step, table.concat(parts, ', '))
    self.lines[#self.lines + 1] = line
    print(line)
  end}
end

-- Stops at global step last_step, or after num_steps more steps.
function hooks.StopAtStepHook(opts)
  util.check_keys('StopAtStepHook', opts or {}, {'last_step', 'num_steps'})
  if (opts.last_step == nil) == (opts.num_steps == nil) then
    util.fail('StopAtStepHook: give exactly one of last_step and num_steps')
  end
  positive('StopAtStepHook last_step', opts.last_step)
  positive('StopAtStepHook num_steps', opts.num_steps)
  return {name = 'StopAtStepHook', last = opts.last_step,
    before_step = function(self, step)
      if not self.last then self.last = step + opts.num_steps end
    end,
    after_step = function(self, info) return info.step >= self.last end}
end

-- Logs steps/s and images/s every_n_steps steps (chief only); TensorBoard
-- gets global_step/sec and images/sec from the summaries.
function hooks.StepCounterHook(opts)
  opts = opts or {}
  util.check_keys('StepCounterHook', opts, {'every_n_steps'})
  positive('StepCounterHook every_n_steps', opts.every_n_steps)
  local every = opts.every_n_steps or 100
  return {name = 'StepCounterHook', rates = {},
    begin = function(self) self.t, self.images = os.clock(), 0 end,
    after_step = function(self, info)
      self.images = self.images + info.batch_size
      if info.step % every ~= 0 then return end
      local now = os.clock()
      local dt = math.max(now - self.t, 1e-9)
      local rate = {step = info.step, steps_per_sec = every / dt, images_per_sec = self.images / dt}
      self.rates[#self.rates + 1] = rate
      if chief() then
        print(string.format('step %d: %.1f steps/s, %.0f images/s (CPU time)', info.step,
                            rate.steps_per_sec, rate.images_per_sec))
      end
      self.t, self.images = now, 0
    end}
end

-- Checkpoints every save_steps steps or save_secs seconds (and after the last step).
function hooks.CheckpointSaverHook(opts)
  util.check_keys('CheckpointSaverHook', opts or {}, {'save_steps', 'save_secs'})
  if (opts.save_steps == nil) == (opts.save_secs == nil) then
    util.fail('CheckpointSaverHook: give exactly one of save_steps and save_secs')
  end
  positive('CheckpointSaverHook save_steps', opts.save_steps)
  positive('CheckpointSaverHook save_secs', opts.save_secs)
  return {name = 'CheckpointSaverHook',
          -- the one given replaces RunConfig's interval, the default's too
          _config = {save_checkpoints_steps = opts.save_steps or 0, save_checkpoints_secs = opts.save_secs or 0}}
end

-- TensorBoard scalars every save_steps steps.
function hooks.SummarySaverHook(opts)
  util.check_keys('SummarySaverHook', opts or {}, {'save_steps'})
  positive('SummarySaverHook save_steps', opts.save_steps)
  return {name = 'SummarySaverHook', _config = {save_summary_steps = opts.save_steps or 100}}
end

-- Stops the job on a NaN or infinite loss, naming the step and the first layer
-- whose output is not finite.
function hooks.NanGuard(opts)
  util.check_keys('NanGuard', opts or {}, {})
  return {name = 'NanGuard', _builtin = 'NanGuard'}
end

-- Before its first step the worker waits until the parameter servers have
-- applied wait_until_step updates (C++: it asks them).
function hooks.GlobalStepWaiterHook(opts)
  util.check_keys('GlobalStepWaiterHook', opts or {}, {'wait_until_step'})
  if type(opts.wait_until_step) ~= 'number' or opts.wait_until_step < 0 then
    util.fail('GlobalStepWaiterHook: wait_until_step must be a number >= 0')
  end
  return {name = 'GlobalStepWaiterHook', _builtin = 'GlobalStepWaiterHook',
          wait_until_step = opts.wait_until_step}
end

-- Calls fn(result) once training has ended; keeps what it returns in .value.
function hooks.FinalOpsHook(opts)
  util.check_keys('FinalOpsHook', opts or {}, {'fn'})
  if type(opts.fn) ~= 'function' then util.fail('FinalOpsHook: fn must be a function') end
  return {name = 'FinalOpsHook', end_ = function(self, result) self.value = opts.fn(result) end}
end

-- Splits a hook list into the loop's hooks and the fit options that
-- CheckpointSaverHook and SummarySaverHook stand for.
function hooks.split(list, fit_options)
  local loop = {}
  for i, h in ipairs(list or {}) do
    if type(h) ~= 'table' then util.fail('hooks[' .. i .. '] must be a hook table, got ' .. type(h)) end
    if h._config then
      for k, v in pairs(h._config) do fit_options[k] = v end
    else
      loop[#loop + 1] = h
    end
  end
  return loop
end

return hooks
