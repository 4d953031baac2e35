-- drun.losses: Keras' losses by class name, e.g.
-- losses.SparseCategoricalCrossentropy{from_logits = true}.
local util = require 'drun.util'

local losses = {}
for _, name in ipairs {'SparseCategoricalCrossentropy', 'CategoricalCrossentropy',
                       'BinaryCrossentropy', 'MeanSquaredError'} do
  losses[name] = util.described('losses.', name)
end
return losses
