-- drun.strategy: how gradients are exchanged between workers. In a single
-- process every strategy trains locally; the distributed launcher reads the
-- choice to place ranks.
local util = require 'drun.util'

local strategy = {}

local function described(name, valid)
  return function(opts)
    opts = opts or {}
    util.check_keys('strategy.' .. name, opts, valid)
    return {name = name, options = util.copy(opts)}
  end
end

strategy.AllReduce = described('AllReduce', {'bucket_bytes', 'scale_lr', 'warmup_epochs'})
strategy.MultiWorkerMirrored = strategy.AllReduce

return strategy
