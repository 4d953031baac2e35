-- drun.losses: Keras' losses by class name, e.g.
-- losses.SparseCategoricalCrossentropy{from_logits = true}.
local util = require 'drun.util'

local losses = {}
for _, name in ipairs {'SparseCategoricalCrossentropy', 'CategoricalCrossentropy',
                       'BinaryCrossentropy', 'MeanSquaredError'} do
  losses[name] = function(config)
    if config ~= nil and type(config) ~= 'table' then
      util.fail('losses.' .. name .. ' expects a table of options, got ' .. type(config))
    end
    return {class_name = name, config = util.copy(config)}
  end
end
return losses
