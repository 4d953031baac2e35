-- A model as the user holds it: the C++ model plus Keras-style compile, fit,
-- evaluate, predict and summary.
local core = require 'drun.core'
local util = require 'drun.util'
local mixed_precision = require 'drun.mixed_precision'

local Model = {}
Model.__index = Model

function Model.new(spec, seed)
  local ok_seed = seed or 0
  if type(ok_seed) ~= 'number' then util.fail('model seed must be a number') end
  return setmetatable({_core = core.model(spec, ok_seed)}, Model)
end

function Model:summary()
  local s = self._core:summary()
  io.write(s)
  return s
end

function Model:count_params() return self._core:param_count() end
function Model:output_shape() return self._core:output_shape() end
function Model:input_shape() return self._core:input_shape() end

-- model:compile{optimizer = optim.SGD{...} or 'sgd', loss = ..., metrics = {'accuracy'},
--               precision = 'mixed_float16', cuda_graphs = false}; precision defaults to
-- drun.mixed_precision's policy; on a GPU steps run as CUDA graphs unless cuda_graphs = false.
-- C++ checks the options (train/compile_options) as it builds the trainer.
function Model:compile(opts)
  if type(opts) ~= 'table' then util.fail('compile expects a table of options, got ' .. type(opts)) end
  local options = util.copy(opts)
  if options.precision == nil then options.precision = mixed_precision.global_policy() end
  self._trainer = core.trainer(self._core, options)
  return self
end

-- In plan mode (drun --dry-run) nothing trains or evaluates, yet a script goes
-- on to print the results: every loss and metric it may read there is 0.
local function planned(values)
  return setmetatable(values, {__index = function() return 0 end})
end

local function trainer(self, what)
  if not self._trainer then util.fail(what .. ': call model:compile{optimizer, loss, metrics} first') end
  return self._trainer
end

-- A Dataset from drun.data with no batch op gets batch_size (Keras' default 32).
local function input_of(ds, batch_size, what)
  if type(ds) ~= 'table' or not ds._core then
    util.fail(what .. ': expects a data set from drun.data, got ' .. type(ds))
  end
  if not ds:is_batched() then ds = ds:batch(batch_size or 32) end
  return ds
end

-- model:fit{x = train, epochs = 3, validation_data = test, steps = N, model_dir = 'runs/x',
--           batch_size = 64, strategy = ..., hooks = {...}, callbacks = {...},
--           save_checkpoints_steps = N,
--           save_checkpoints_secs = S, keep_checkpoint_max = 5, save_summary_steps = N,
--           histogram_freq = N, eval_every_steps = N, eval_steps = N, timeline = 'trace.json'}
-- epochs defaults to 1, or with steps given to none: the steps alone bound the run.
-- With a model_dir that holds checkpoints, training continues from the newest.
-- The options are C++'s (train/fit_config), checked here: the inputs and hooks
-- are read here, the others go to the trainer as they are.
function Model:fit(opts)
  if type(opts) ~= 'table' then util.fail('fit expects a table of options, got ' .. type(opts)) end
  local options = util.checked('fit', 'fit', opts)
  local t = trainer(self, 'fit')
  if core.context().plan then  -- record what would run; read and train nothing
    core.plan_fit(self._core, options.strategy, options.model_dir)
    -- No eval: a script that prints a validation result when there is one prints none.
    return {global_step = 0, epochs = 0, workers = 1, train = planned{}}
  end
  local train = input_of(options.x, options.batch_size, 'fit x')
  local eval = options.validation_data and input_of(options.validation_data, options.batch_size, 'fit validation_data')
  local hook_list, callback_list = options.hooks, options.callbacks
  if hook_list ~= nil and type(hook_list) ~= 'table' then util.fail('fit: hooks must be a list of hooks') end
  if callback_list ~= nil and type(callback_list) ~= 'table' then
    util.fail('fit: callbacks must be a list of callbacks')
  end
  options.x, options.validation_data, options.batch_size, options.hooks = nil, nil, nil, nil
  options.callbacks = nil
  return t:fit(train._core, train._ops, eval and eval._core, eval and eval._ops, options, hook_list,
               callback_list)
end

-- Keras HDF5 (model.save('m.h5') in Keras): architecture, weights and, once
-- compiled, the training configuration. Keras loads it with
-- keras.models.load_model. Only the chief writes in a multi-worker job.
function Model:save(path)
  if type(path) ~= 'string' then util.fail('save: expects a file path') end
  if core.context().plan or core.context().role ~= 'chief' then return end
  self._core:save(path, self._trainer)
end

function Model:save_weights(path)
  if type(path) ~= 'string' then util.fail('save_weights: expects a file path') end
  if core.context().plan or core.context().role ~= 'chief' then return end
  self._core:save_weights(path)
end

-- Weights from a Keras .h5 (whole model or weights only): layers with weights
-- in order, or by layer name with {by_name = true}.
function Model:load_weights(path, opts)
  opts = opts or {}
  util.check_keys('load_weights', opts, {'by_name'})
  if type(path) ~= 'string' then util.fail('load_weights: expects a file path') end
  if core.context().plan then return end
  self._core:load_weights(path, opts.by_name)
end

-- A model from a Keras .h5 file (tf.keras 2.x or Keras 3), uncompiled.
function Model.load(path)
  if type(path) ~= 'string' then util.fail('load_model: expects a file path') end
  return setmetatable({_core = core.load_model(path)}, Model)
end

function Model:evaluate(ds, opts)
  opts = opts or {}
  util.check_keys('evaluate', opts, {'batch_size', 'steps'})
  local t = trainer(self, 'evaluate')
  if core.context().plan then return planned{} end
  local input = input_of(ds, opts.batch_size, 'evaluate')
  return t:evaluate(input._core, input._ops, opts.steps)
end

-- Outputs as a Lua table of rows. Works on an uncompiled model too.
function Model:predict(ds, opts)
  opts = opts or {}
  util.check_keys('predict', opts, {'batch_size'})
  if core.context().plan then return {} end
  local input = input_of(ds, opts.batch_size, 'predict')
  local t = self._trainer or core.trainer(self._core, {loss = 'mse'})
  return t:predict(input._core, input._ops)
end

return Model
