-- drun.strategy: how gradients are exchanged between workers. In a single
-- process every strategy trains locally; with several workers (drun -np N)
-- the C++ side builds it from this description.
local util = require 'drun.util'

local strategy = {}

local function described(name, valid)
  return function(opts)
    opts = opts or {}
    util.check_keys('strategy.' .. name, opts, valid)
    return {name = name, options = util.copy(opts)}
  end
end

-- scale_lr: multiply the learning rate by the number of workers (Goyal et al. 2017).
strategy.AllReduce = described('AllReduce', {'bucket_bytes', 'scale_lr'})
strategy.MultiWorkerMirrored = strategy.AllReduce

return strategy
