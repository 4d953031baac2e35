-- drun.callbacks: Keras' callbacks (keras.callbacks), passed as
-- fit{callbacks = {...}} (and Estimator:train / Experiment{callbacks = ...}).
-- Their names, options and Keras' defaults are the C++ callback registry's
-- (train/callbacks/callback_list.hpp), which checks each constructor's options
-- where the script calls it; C++ runs them (EarlyStopping, ReduceLROnPlateau,
-- ModelCheckpoint, CSVLogger, TerminateOnNaN), except LearningRateScheduler,
-- whose schedule is a Lua function, defined below as a callback of the kind
-- users write: a table with any of on_train_begin(self),
-- on_epoch_begin(self, epoch), on_epoch_end(self, epoch, logs),
-- on_train_batch_end(self, batch, logs), on_test_end(self, logs),
-- on_train_end(self), get_state(self) and set_state(self, state). Before each
-- call the loop sets self.learning_rate and self.stop_training = false; a
-- callback changes the rate by setting self.learning_rate and stops the fit
-- with self.stop_training = true (bindings/lua/callbacks.hpp).
local core = require 'drun.core'
local util = require 'drun.util'

local callbacks = {}

local registry = {}
for _, entry in ipairs(core.registry('callbacks')) do registry[entry.names[1]] = entry end

-- Keras' positional form, ModelCheckpoint('best.h5') or
-- LearningRateScheduler(fn), as the table the registry checks.
local function options_of(name, ...)
  local first = select(1, ...)
  if select('#', ...) == 0 or first == nil or type(first) == 'table' then return first end
  local o, args = {}, {...}
  for i, option in ipairs(registry[name].positional or {}) do o[option] = args[i] end
  if select('#', ...) > #(registry[name].positional or {}) then
    util.fail(name .. ': too many arguments; give a table of options')
  end
  return o
end

for name, entry in pairs(registry) do
  if entry.builtin then
    callbacks[name] = function(...)
      return {name = name, _callback = name,
              _options = util.checked('callbacks', name, options_of(name, ...))}
    end
  end
end

-- Sets the rate at each epoch's start to schedule(epoch, lr) (epoch from 0).
function callbacks.LearningRateScheduler(...)
  local o = util.checked('callbacks', 'LearningRateScheduler', options_of('LearningRateScheduler', ...))
  if type(o.schedule) ~= 'function' then util.fail('LearningRateScheduler: schedule must be a function') end
  local verbose = o.verbose or 0
  return {name = 'LearningRateScheduler', on_epoch_begin = function(self, epoch)
    local lr = o.schedule(epoch, self.learning_rate)
    if type(lr) ~= 'number' then
      util.fail('LearningRateScheduler: the schedule returned a ' .. type(lr) .. ', not a number')
    end
    self.learning_rate = lr
    if verbose > 0 and core.context().role == 'chief' then
      print(string.format('Epoch %d: LearningRateScheduler setting learning rate to %s.', epoch + 1, tostring(lr)))
    end
  end}
end

-- Every callback of the registry has its constructor here.
for name in pairs(registry) do
  if not callbacks[name] then error('drun.callbacks: no constructor for the registry\'s ' .. name) end
end

return callbacks
