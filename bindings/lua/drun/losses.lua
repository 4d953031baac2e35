-- drun.losses: Keras' losses by class name, e.g.
-- losses.SparseCategoricalCrossentropy{from_logits = true}. The losses and
-- their options are the C++ registry's (nn/loss_list.hpp), which checks a
-- description where the script makes it; the snake_case names
-- ('sparse_categorical_crossentropy', 'mse') are Keras' string shorthands that
-- compile takes as they are.
local core = require 'drun.core'
local util = require 'drun.util'

local losses = {}
for _, entry in ipairs(core.registry('losses')) do
  local make = util.described('losses.', entry.names[1], 'losses')
  for _, name in ipairs(entry.names) do
    if name:match('^%u') then losses[name] = make end
  end
end
return util.strict(losses, 'drun.losses')
