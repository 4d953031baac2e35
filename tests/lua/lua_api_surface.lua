-- The public Lua API as the code defines it, one name per line, for the
-- comparison with docs/lua-api.md (lua_api_drift.py):
--   drun.nn.Dense              a function of a drun module
--   Model:fit                  a method of a model, data set, estimator or experiment
--   Model:fit epochs           an option the code accepts (read from the
--                              "valid options: ..." of the error that an
--                              unknown option raises, so from the lists the
--                              Lua modules and the C++ Options check against)
--   drun.nn.* name             an option every layer takes (likewise
--                              drun.optim.*, drun.optim.schedules.*, drun.losses.*,
--                              drun.metrics.*)
--   activation relu            a name the code accepts as a value
-- Exits non-zero if an option list cannot be read.
local drun = require 'drun'
local nn, data, optim = drun.nn, drun.data, drun.optim

local api = require 'api_options'
local BAD, with_bad, needs, constructors = api.BAD, api.with_bad, api.needs, api.constructors
local lines, problems = {}, {}
local function emit(s) lines[#lines + 1] = s end

-- Functions that are public by accident of Lua's tables, not API.
local internal = {
  ['drun.core'] = 'the C module the others call',
  ['drun.hooks.split'] = 'Estimator:train uses it to turn hooks into fit options',
  ['Model:new'] = 'nn.Sequential and nn.Model call it',
  ['Model:load'] = 'drun.load_model is this function',
}

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do if type(k) == 'string' then keys[#keys + 1] = k end end
  table.sort(keys)
  return keys
end

-- Functions of the drun table and of its module tables, recursively.
local function walk(prefix, t)
  for _, k in ipairs(sorted_keys(t)) do
    local name, v = prefix .. '.' .. k, t[k]
    if internal[name] then  -- skip
    elseif name == 'drun.strategy.by_name' then
      emit(name)
      for _, s in ipairs(sorted_keys(v)) do
        emit('drun.strategy.named ' .. s)
        emit(name .. ' ' .. s)
      end
    elseif type(v) == 'function' then
      emit(name)
    elseif type(v) == 'table' then
      walk(name, v)
    end
  end
end
walk('drun', drun)

local function methods(class, object)
  for _, k in ipairs(sorted_keys(getmetatable(object))) do
    local v = getmetatable(object)[k]
    if type(v) == 'function' and not k:match('^__') and not internal[class .. ':' .. k] then
      emit(class .. ':' .. k)
    end
  end
end

-- The keys listed after "valid options: " in the error that f raises when
-- given BAD.
local function options(what, f)
  local ok, err = pcall(f)
  err = tostring(err)
  local list = err:match("unknown option '" .. BAD .. "'; valid options: ([%w_, ]*)")
  if ok or not list then
    problems[#problems + 1] = what .. ': no list of valid options in ' .. (ok and 'a success' or err)
    return {}
  end
  local keys = {}
  for k in list:gmatch('[%w_]+') do keys[#keys + 1] = k end
  return keys
end
local function emit_options(what, keys)
  for _, k in ipairs(keys) do emit(what .. ' ' .. k) end
end

-- The names listed after "valid: " in the error of an unknown value.
local function values(what, f)
  local ok, err = pcall(f)
  local list = not ok and tostring(err):match('; valid: ([%w_, ]*)')
  if not list then
    problems[#problems + 1] = what .. ': no list of valid names in ' .. tostring(err)
    return
  end
  for v in list:gmatch('[%w_]+') do emit(what .. ' ' .. v) end
end


-- A family of constructors: the options all of them take once, under
-- `family .. '.*'`, the others under each name.
local function family(prefix, names, keys_of)
  local all, common = {}, nil
  for _, name in ipairs(names) do
    local keys = keys_of(name)
    all[name] = keys
    local set = {}
    for _, k in ipairs(keys) do set[k] = common == nil or common[k] or nil end
    common = set
  end
  emit_options(prefix .. '.*', sorted_keys(common or {}))
  for _, name in ipairs(names) do
    for _, k in ipairs(all[name]) do
      if not common[k] then emit(prefix .. '.' .. name .. ' ' .. k) end
    end
  end
end

-- Layers are checked in C++ when a model is built: each inside a small graph.
local flat = {Dense = true, Dropout = true, Activation = true, ReLU = true, Softmax = true, LeakyReLU = true}
local layer_names = {}
for _, name in ipairs(constructors(nn)) do
  if name ~= 'Sequential' and name ~= 'Model' and name ~= 'Input' then layer_names[#layer_names + 1] = name end
end
family('drun.nn', layer_names, function(name)
  return options('drun.nn.' .. name, function()
    local x = nn.Input{shape = flat[name] and {3} or {4, 4, 2}}
    local inputs = {}
    for i = 1, name == 'Add' and 2 or 1 do
      inputs[i] = flat[name] and nn.Dense{units = 3}(x) or nn.Conv2D{filters = 2, kernel_size = 1}(x)
    end
    nn.Model{inputs = x, outputs = nn[name](with_bad(needs[name]))(inputs)}
  end)
end)
emit_options('drun.nn.Input', options('drun.nn.Input', function() nn.Input(with_bad{shape = {3}}) end))
emit_options('drun.nn.Model', options('drun.nn.Model', function()
  local x = nn.Input{shape = {3}}
  nn.Model(with_bad{inputs = x, outputs = nn.Dense{units = 1}(x)})
end))
emit_options('drun.nn.Sequential', options('drun.nn.Sequential', function()
  nn.Sequential(with_bad{nn.Dense{units = 1, input_shape = {3}}})
end))

local function small_model() return nn.Sequential{nn.Dense{units = 2, input_shape = {3}}} end
-- LossScaleOptimizer wraps the others and takes options of its own.
local update_rules = {}
for _, name in ipairs(constructors(optim)) do
  if name ~= 'LossScaleOptimizer' then update_rules[#update_rules + 1] = name end
end
family('drun.optim', update_rules, function(name)
  return options('drun.optim.' .. name, function()
    small_model():compile{optimizer = optim[name](with_bad()), loss = 'mse'}
  end)
end)
emit_options('drun.optim.LossScaleOptimizer', options('drun.optim.LossScaleOptimizer', function()
  small_model():compile{optimizer = optim.LossScaleOptimizer(with_bad{inner_optimizer = optim.SGD{}}),
                        loss = 'mse'}
end))
family('drun.optim.schedules', constructors(optim.schedules), function(name)
  return options('drun.optim.schedules.' .. name, function()
    small_model():compile{optimizer = optim.SGD{learning_rate = optim.schedules[name](with_bad(needs[name]))},
                          loss = 'mse'}
  end)
end)
family('drun.losses', constructors(drun.losses), function(name)
  return options('drun.losses.' .. name, function()
    small_model():compile{optimizer = 'sgd', loss = drun.losses[name](with_bad())}
  end)
end)
family('drun.metrics', constructors(drun.metrics), function(name)
  return options('drun.metrics.' .. name, function()
    small_model():compile{optimizer = 'sgd', loss = 'mse', metrics = {drun.metrics[name](with_bad())}}
  end)
end)
for _, name in ipairs(constructors(drun.strategy)) do
  emit_options('drun.strategy.' .. name, options('drun.strategy.' .. name, function()
    drun.strategy[name](with_bad())
  end))
end
for _, name in ipairs(constructors(drun.hooks)) do
  emit_options('drun.hooks.' .. name, options('drun.hooks.' .. name, function()
    drun.hooks[name](with_bad())
  end))
end
for _, name in ipairs(constructors(drun.callbacks)) do
  emit_options('drun.callbacks.' .. name, options('drun.callbacks.' .. name, function()
    drun.callbacks[name](with_bad(needs[name]))
  end))
end

-- Data sets and their methods (the options are checked before any file is read).
for _, name in ipairs(api.readers(data)) do
  emit_options('drun.data.' .. name, options('drun.data.' .. name, function()
    data[name](with_bad(api.reader_args[name]))
  end))
end
local ds = data.arrays{x = {{1, 2, 3}, {3, 2, 1}}, y = {0, 1}}
methods('Dataset', ds)
for _, m in ipairs {'shuffle', 'batch', 'map', 'augment', 'split'} do
  emit_options('Dataset:' .. m, options('Dataset:' .. m, function() ds[m](ds, with_bad()) end))
end

-- A model's methods.
local model = small_model()
methods('Model', model)
emit_options('Model:compile', options('Model:compile', function()
  model:compile(with_bad{optimizer = 'sgd', loss = 'mse'})
end))
model:compile{optimizer = 'sgd', loss = 'sparse_categorical_crossentropy'}
emit_options('Model:fit', options('Model:fit', function() model:fit(with_bad{x = ds}) end))
for _, m in ipairs {'evaluate', 'predict'} do
  emit_options('Model:' .. m, options('Model:' .. m, function() model[m](model, ds, with_bad()) end))
end
emit_options('Model:load_weights', options('Model:load_weights', function()
  model:load_weights('none.h5', with_bad())
end))

-- Estimators, canned or not, RunConfig and Experiment.
for _, name in ipairs(constructors(drun)) do
  emit_options('drun.' .. name, options('drun.' .. name, function() drun[name](with_bad()) end))
end
local estimator = drun.Estimator{model = small_model(), loss = 'mse', optimizer = 'sgd'}
methods('Estimator', estimator)
for _, m in ipairs {'train', 'evaluate', 'predict'} do
  emit_options('Estimator:' .. m, options('Estimator:' .. m, function() estimator[m](estimator, with_bad()) end))
end
methods('Experiment', drun.Experiment{estimator = estimator, train_input = ds})

-- Names the code accepts as values.
values('activation', function() nn.Sequential{nn.Dense(2, BAD, {input_shape = {3}})} end)
values('initializer', function() nn.Sequential{nn.Dense(2, {kernel_initializer = BAD, input_shape = {3}})} end)
values('metric', function() small_model():compile{optimizer = 'sgd', loss = 'mse', metrics = {BAD}} end)

table.sort(lines)
for _, l in ipairs(lines) do print(l) end
if #problems > 0 then error('\n  ' .. table.concat(problems, '\n  '), 0) end
