-- Every table the Lua API takes refuses a key it does not know, and the
-- error names that key. The walk covers every constructor the drun module
-- exports (layers, optimizers, schedules, losses, strategies, hooks, data
-- sets, canned estimators, RunConfig, Estimator, Experiment) and the option
-- tables of their methods, so a constructor added later is walked too: one
-- that needs options gets its minimal ones in `needs` below.
-- Prints "checked N tables" and exits non-zero, listing them, if any fails.
local drun = require 'drun'
local nn, optim, losses, data, hooks, strategy = drun.nn, drun.optim, drun.losses, drun.data,
                                                 drun.hooks, drun.strategy

local api = require 'api_options'
local BAD, with_bad, needs, sorted_constructors = api.BAD, api.with_bad, api.needs, api.constructors
local checked, failures = 0, {}

-- f() must fail with an error that names BAD.
local function expect_refusal(what, f)
  checked = checked + 1
  local ok, err = pcall(f)
  if ok then
    failures[#failures + 1] = what .. ': accepted ' .. BAD
  elseif not tostring(err):find("'" .. BAD .. "'", 1, true) then
    failures[#failures + 1] = what .. ': failed without naming ' .. BAD .. ': ' .. tostring(err)
  end
end


local image_layers = {Conv2D = true, MaxPooling2D = true, MaxPool2D = true, AveragePooling2D = true,
                      AvgPool2D = true, GlobalAveragePooling2D = true, Flatten = true,
                      BatchNormalization = true}
local inputs_of = {Add = 2}

-- Layers: each inside a small functional model, where C++ checks the options.
for _, name in ipairs(sorted_constructors(nn)) do
  if name ~= 'Sequential' and name ~= 'Model' and name ~= 'Input' then
    expect_refusal('nn.' .. name, function()
      local x = nn.Input{shape = image_layers[name] and {4, 4, 2} or {3}}
      local inputs = {}
      for i = 1, inputs_of[name] or 1 do
        inputs[i] = image_layers[name] and nn.Conv2D{filters = 2, kernel_size = 1}(x)
                                        or nn.Dense{units = 3}(x)
      end
      local y = nn[name](with_bad(needs[name]))(inputs)
      nn.Model{inputs = x, outputs = y}
    end)
  end
end
expect_refusal('nn.Input', function() nn.Input(with_bad{shape = {3}}) end)
expect_refusal('nn.Model', function()
  local x = nn.Input{shape = {3}}
  nn.Model(with_bad{inputs = x, outputs = nn.Dense{units = 1}(x)})
end)

local function small_model()
  return nn.Sequential{nn.Dense{units = 2, input_shape = {3}}}
end
local xs = {{1, 2, 3}, {3, 2, 1}, {0, 1, 0}, {1, 1, 1}}
local ys = {0, 1, 0, 1}

-- Optimizers and schedules: C++ checks them when compile builds the trainer.
for _, name in ipairs(sorted_constructors(optim)) do
  expect_refusal('optim.' .. name, function()
    small_model():compile{optimizer = optim[name](with_bad(needs[name])),
                          loss = 'sparse_categorical_crossentropy'}
  end)
end
for _, name in ipairs(sorted_constructors(optim.schedules)) do
  expect_refusal('optim.schedules.' .. name, function()
    small_model():compile{
      optimizer = optim.SGD{learning_rate = optim.schedules[name](with_bad(needs[name]))},
      loss = 'sparse_categorical_crossentropy'}
  end)
end
for _, name in ipairs(sorted_constructors(losses)) do
  expect_refusal('losses.' .. name, function()
    small_model():compile{optimizer = 'sgd', loss = losses[name](with_bad())}
  end)
end

for _, name in ipairs(sorted_constructors(strategy)) do
  expect_refusal('strategy.' .. name, function() strategy[name](with_bad()) end)
end
for _, name in ipairs(sorted_constructors(hooks)) do
  expect_refusal('hooks.' .. name, function() hooks[name](with_bad(needs[name])) end)
end

-- Data sets: the option check comes before any file is read.
for _, name in ipairs(api.readers(data)) do
  expect_refusal('data.' .. name, function() data[name](with_bad(api.reader_args[name])) end)
end
local ds = data.arrays{x = xs, y = ys}
for _, method in ipairs {'shuffle', 'batch', 'map', 'augment'} do
  expect_refusal('Dataset:' .. method, function() ds[method](ds, with_bad()) end)
end

-- A model's methods.
local model = small_model()
expect_refusal('model:compile', function()
  model:compile(with_bad{optimizer = 'sgd', loss = 'sparse_categorical_crossentropy'})
end)
model:compile{optimizer = 'sgd', loss = 'sparse_categorical_crossentropy'}
expect_refusal('model:fit', function() model:fit(with_bad{x = ds:batch(2), epochs = 1}) end)
expect_refusal('model:evaluate', function() model:evaluate(ds, with_bad()) end)
expect_refusal('model:predict', function() model:predict(ds, with_bad()) end)
expect_refusal('model:load_weights', function() model:load_weights('none.h5', with_bad()) end)

-- Estimators, canned and not, RunConfig and Experiment.
local canned_needs = {DNNClassifier = {hidden_units = {4}, n_classes = 2},
                      DNNRegressor = {hidden_units = {4}}}
for _, name in ipairs {'DNNClassifier', 'DNNRegressor', 'LinearClassifier', 'LinearRegressor'} do
  local opts = with_bad(canned_needs[name])
  opts.feature_columns = 3
  expect_refusal('drun.' .. name, function() drun[name](opts) end)
end
expect_refusal('drun.RunConfig', function() drun.RunConfig(with_bad()) end)
local function estimator_opts()
  return {model = small_model(), loss = 'sparse_categorical_crossentropy', optimizer = 'sgd'}
end
expect_refusal('drun.Estimator', function() drun.Estimator(with_bad(estimator_opts())) end)
local estimator = drun.Estimator(estimator_opts())
expect_refusal('Estimator:train', function() estimator:train(with_bad{input = ds:batch(2)}) end)
expect_refusal('Estimator:evaluate', function() estimator:evaluate(with_bad{input = ds}) end)
expect_refusal('Estimator:predict', function() estimator:predict(with_bad{input = ds}) end)
expect_refusal('drun.Experiment', function()
  drun.Experiment(with_bad{estimator = estimator, train_input = ds:batch(2)})
end)

print('checked ' .. checked .. ' tables')
if #failures > 0 then
  error('\n  ' .. table.concat(failures, '\n  '), 0)
end
