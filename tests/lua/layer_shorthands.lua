-- Keras' positional shorthands for layers: nn.Dense(32, 'relu'),
-- nn.Conv2D(32, 3), ... build the same model as the options by name, and
-- wrong ones fail naming the layer and the argument.
local drun = require 'drun'
local nn = drun.nn

-- The layer specs of two models, as comparable strings.
local function layers_text(model)
  local parts = {}
  for i, l in ipairs(model._core:spec().layers) do
    local keys = {}
    for k in pairs(l.config) do keys[#keys + 1] = k end
    table.sort(keys)
    local cfg = {}
    for _, k in ipairs(keys) do
      local v = l.config[k]
      cfg[#cfg + 1] = k .. '=' .. (type(v) == 'table' and table.concat(v, 'x') or tostring(v))
    end
    parts[i] = l.class_name .. '{' .. table.concat(cfg, ' ') .. '}'
  end
  return table.concat(parts, '\n')
end

local short = nn.Sequential{
  nn.Conv2D(8, 3, {activation = 'relu', input_shape = {8, 8, 1}}),
  nn.Conv2D(4, {3, 3}, 1, 'same'),
  nn.MaxPooling2D(2),
  nn.AveragePooling2D({2, 2}, 1, 'valid'),
  nn.Flatten(),
  nn.Dropout(0.25),
  nn.Dense(16, 'relu'),
  nn.Dense{12, activation = 'tanh'},
  nn.Dense(10),
  nn.LeakyReLU(0.1),
  nn.Activation('softmax'),
}
local long = nn.Sequential{
  nn.Conv2D{filters = 8, kernel_size = 3, activation = 'relu', input_shape = {8, 8, 1}},
  nn.Conv2D{filters = 4, kernel_size = {3, 3}, strides = 1, padding = 'same'},
  nn.MaxPooling2D{pool_size = 2},
  nn.AveragePooling2D{pool_size = {2, 2}, strides = 1, padding = 'valid'},
  nn.Flatten{},
  nn.Dropout{rate = 0.25},
  nn.Dense{units = 16, activation = 'relu'},
  nn.Dense{units = 12, activation = 'tanh'},
  nn.Dense{units = 10},
  nn.LeakyReLU{negative_slope = 0.1},
  nn.Activation{activation = 'softmax'},
}
local a, b = layers_text(short), layers_text(long)
if a ~= b then error('positional and named layers differ:\n' .. a .. '\n--- named ---\n' .. b, 0) end
assert(short:count_params() == long:count_params() and short:count_params() > 0)
assert(select(2, a:gsub('\n', '')) == 10 and a:find('Conv2D{filters=4 kernel_size=3x3 name=conv2d_1 padding=same strides=1}', 1, true), a)
print('same model: ' .. short:count_params() .. ' params')

-- Each wrong use fails at the call, naming the layer and what was wrong.
local function expect_error(what, f, words)
  local ok, err = pcall(f)
  if ok then error(what .. ': accepted', 0) end
  if not tostring(err):find(words, 1, true) then
    error(what .. ': error lacks "' .. words .. '": ' .. tostring(err), 0)
  end
  print('ok ' .. what .. ': ' .. tostring(err))
end
expect_error('twice', function() return nn.Dense(32, {units = 16}) end,
             'nn.Dense: units given twice, as argument 1 and as units = ...')
expect_error('too many', function() return nn.Dense(32, 'relu', true) end,
             'nn.Dense takes at most 2 positional arguments (units, activation), got 3')
expect_error('none taken', function() return nn.Flatten(2) end,
             'nn.Flatten takes no positional arguments, got 1')
expect_error('wrong type', function() return nn.Conv2D(32, 3, 'relu') end,
             'nn.Conv2D: argument 3 is strides, a number or a table of numbers, got string "relu"')
expect_error('nil hole', function() return nn.Dense(nil, 'relu') end,
             'nn.Dense: argument 1 is nil')
expect_error('both places', function() return nn.Dense(32, {'relu'}) end,
             'nn.Dense: positional arguments go either before the options table or inside it')
