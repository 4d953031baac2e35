-- drun.optim: optimizers and learning-rate schedules by their Keras names.
-- Each returns a description {class_name, config}, checked at once by C++
-- (core.check), which builds it at compile. The classes and their options are
-- the C++ registries' (optim/optimizer_list.hpp, optim/schedule_list.hpp):
-- a constructor for each Keras class name (RMSprop also as RMSProp); the
-- lowercase names ('sgd', 'adam'...) are Keras' string shorthands that compile
-- takes as they are.
local core = require 'drun.core'
local util = require 'drun.util'

local optim = {schedules = {}}

local function constructors(kind, prefix, into)
  for _, entry in ipairs(core.registry(kind)) do
    local make = util.described(prefix, entry.names[1], kind)
    for _, name in ipairs(entry.names) do
      if name:match('^%u') then into[name] = make end
    end
  end
end
constructors('optimizers', 'optim.', optim)
constructors('schedules', 'optim.schedules.', optim.schedules)

util.strict(optim.schedules, 'drun.optim.schedules')
return util.strict(optim, 'drun.optim')
