-- drun.hooks: TensorFlow's training hooks. A hook is a table with any of
-- begin(self), before_step(self, step), after_step(self, info) -> stop?,
-- end_(self, result), called by the C++ training loop; info is {step, epoch,
-- loss, learning_rate, batch_size, metrics = {loss = running mean, ...}}.
-- Users write their own hooks the same way. The hooks here, their options and
-- defaults are the C++ hook registry's (train/hook_list.hpp), which checks
-- each constructor's options where the script calls it. The hooks C++ runs
-- (NanGuard: it inspects the layers' outputs; GlobalStepWaiterHook: it asks
-- the parameter servers) are made from the registry alone; the others are
-- defined below. CheckpointSaverHook and SummarySaverHook set the intervals of
-- the loop's own C++ hooks of those names (runtime/train/checkpoint_saver,
-- summary_saver).
local core = require 'drun.core'
local util = require 'drun.util'

local hooks = {}

local registry = {}
for _, entry in ipairs(core.registry('hooks')) do registry[entry.names[1]] = entry end

-- The options of hook `name`, checked by C++, with the registry's defaults
-- for those not given.
local function options(name, opts)
  local o = util.checked('hooks', name, opts)
  for _, option in ipairs(registry[name].options) do
    if o[option.name] == nil then o[option.name] = option.default end
  end
  return o
end

local function chief() return core.context().role == 'chief' end

local function positive(what, v)
  if v ~= nil and v <= 0 then util.fail(what .. ' must be a positive number, got ' .. tostring(v)) end
end

-- The hooks C++ runs: a description the training loop builds them from.
for name, entry in pairs(registry) do
  if entry.builtin then
    hooks[name] = function(opts)
      return {name = name, _builtin = name, _options = util.checked('hooks', name, opts)}
    end
  end
end

-- Logs the named running values every_n_steps steps (chief only).
function hooks.LoggingHook(opts)
  local o = options('LoggingHook', opts)
  positive('LoggingHook every_n_steps', o.every_n_steps)
  local every, names = o.every_n_steps, o.tensors
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
  local o = options('StopAtStepHook', opts)
  if (o.last_step == nil) == (o.num_steps == nil) then
    util.fail('StopAtStepHook: give exactly one of last_step and num_steps')
  end
  positive('StopAtStepHook last_step', o.last_step)
  positive('StopAtStepHook num_steps', o.num_steps)
  return {name = 'StopAtStepHook', last = o.last_step,
    before_step = function(self, step)
      if not self.last then self.last = step + o.num_steps end
    end,
    after_step = function(self, info) return info.step >= self.last end}
end

-- Logs steps/s and images/s every_n_steps steps (chief only); TensorBoard
-- gets global_step/sec and images/sec from the summaries.
function hooks.StepCounterHook(opts)
  local o = options('StepCounterHook', opts)
  positive('StepCounterHook every_n_steps', o.every_n_steps)
  local every = o.every_n_steps
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
  local o = options('CheckpointSaverHook', opts)
  if (o.save_steps == nil) == (o.save_secs == nil) then
    util.fail('CheckpointSaverHook: give exactly one of save_steps and save_secs')
  end
  positive('CheckpointSaverHook save_steps', o.save_steps)
  positive('CheckpointSaverHook save_secs', o.save_secs)
  return {name = 'CheckpointSaverHook',
          -- the one given replaces RunConfig's interval, the default's too
          _config = {save_checkpoints_steps = o.save_steps or 0, save_checkpoints_secs = o.save_secs or 0}}
end

-- TensorBoard scalars every save_steps steps.
function hooks.SummarySaverHook(opts)
  local o = options('SummarySaverHook', opts)
  positive('SummarySaverHook save_steps', o.save_steps)
  return {name = 'SummarySaverHook', _config = {save_summary_steps = o.save_steps}}
end

-- Calls fn(result) once training has ended; keeps what it returns in .value.
function hooks.FinalOpsHook(opts)
  local o = options('FinalOpsHook', opts)
  if type(o.fn) ~= 'function' then util.fail('FinalOpsHook: fn must be a function') end
  return {name = 'FinalOpsHook', end_ = function(self, result) self.value = o.fn(result) end}
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

-- Every hook of the registry has its constructor here.
for name in pairs(registry) do
  if not rawget(hooks, name) then error('drun.hooks: no constructor for the registry\'s ' .. name) end
end

return util.strict(hooks, 'drun.hooks')
