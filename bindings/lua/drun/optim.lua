-- drun.optim: optimizers and learning-rate schedules by their Keras names.
-- Each returns a description {class_name, config}; C++ checks the options.
local util = require 'drun.util'

local optim = {schedules = {}}

for _, name in ipairs {'SGD', 'Adam', 'Adagrad', 'RMSprop', 'LossScaleOptimizer'} do
  optim[name] = util.described('optim.', name)
end
optim.RMSProp = optim.RMSprop

for _, name in ipairs {'PiecewiseConstantDecay', 'ExponentialDecay', 'CosineDecay', 'LinearWarmup'} do
  optim.schedules[name] = util.described('optim.schedules.', name)
end

return optim
