-- drun.optim: optimizers and learning-rate schedules by their Keras names.
-- Each returns a description {class_name, config}; C++ checks the options.
local util = require 'drun.util'

local optim = {schedules = {}}

local function described(class_name)
  return function(config)
    if config ~= nil and type(config) ~= 'table' then
      util.fail('optim.' .. class_name .. ' expects a table of options, got ' .. type(config))
    end
    return {class_name = class_name, config = util.copy(config)}
  end
end

for _, name in ipairs {'SGD', 'Adam', 'Adagrad', 'RMSprop'} do optim[name] = described(name) end
optim.RMSProp = optim.RMSprop

for _, name in ipairs {'PiecewiseConstantDecay', 'ExponentialDecay', 'CosineDecay', 'LinearWarmup'} do
  optim.schedules[name] = described(name)
end

return optim
