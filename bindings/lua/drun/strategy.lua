-- drun.strategy: how workers keep their models in step. Each function returns
-- a description {name, options}; C++ (runtime/distributed/strategy_spec) checks the
-- options and builds the worker's and the servers' sides. In a single process
-- every strategy trains locally. docs/strategies.md gives each update rule.
local util = require 'drun.util'

local strategy = {}

local function described(name, valid)
  return function(opts)
    opts = opts or {}
    util.check_keys('strategy.' .. name, opts, valid)
    return {name = name, options = util.copy(opts)}
  end
end

-- scale_lr (strategies that exchange gradients): multiply the learning rate of
-- the optimizer that applies them, AllReduce's or the servers', by the number
-- of workers (Goyal et al. 2017).
-- placement: how variables are spread over parameter servers, 'greedy' (by
-- bytes, the default) or 'round_robin'.
-- shared_memory (default true): workers on one node sum through node-shared
-- memory rather than MPI's allreduce.
-- hierarchical (default true): across nodes, workers sum within their node
-- first, then across nodes one slice each (docs/strategies.md).
strategy.AllReduce = described('AllReduce',
  {'bucket_bytes', 'scale_lr', 'shared_memory', 'hierarchical'})
strategy.MultiWorkerMirrored = strategy.AllReduce
strategy.ParameterServer = described('ParameterServer',
  {'mode', 'replicas_to_aggregate', 'backup_workers', 'placement', 'scale_lr'})
strategy.DynSGD = described('DynSGD', {'placement', 'scale_lr'})
strategy.SyncSGD = described('SyncSGD', {'learning_rates', 'placement', 'scale_lr'})
strategy.Downpour = described('Downpour',
  {'n_push', 'n_fetch', 'worker_optimizer', 'server_optimizer', 'placement', 'scale_lr'})
strategy.DownpourEasy = described('DownpourEasy', {'n_push', 'n_fetch', 'worker_optimizer', 'placement', 'scale_lr'})
strategy.Hogwild = described('Hogwild', {})
strategy.AGN = described('AGN', {'lambda', 'placement'})
strategy.SAGN = described('SAGN', {'lambda', 'placement'})
strategy.EASGD = described('EASGD', {'tau', 'alpha', 'placement'})
strategy.AEASGD = described('AEASGD', {'tau', 'alpha', 'placement'})
strategy.AEAMSGD = described('AEAMSGD', {'tau', 'alpha', 'momentum', 'placement'})

-- The snake_case names that scripts take on the command line (--strategy NAME).
strategy.by_name = {
  all_reduce = strategy.AllReduce,
  ps_async = function(o) o = util.copy(o or {}); o.mode = 'async'; return strategy.ParameterServer(o) end,
  ps_sync = function(o) o = util.copy(o or {}); o.mode = 'sync'; return strategy.ParameterServer(o) end,
  downpour = strategy.Downpour,
  downpour_easy = strategy.DownpourEasy,
  hogwild = strategy.Hogwild,
  agn = strategy.AGN,
  sagn = strategy.SAGN,
  easgd = strategy.EASGD,
  aeasgd = strategy.AEASGD,
  aeamsgd = strategy.AEAMSGD,
  dyn_sgd = strategy.DynSGD,
  sync_sgd = strategy.SyncSGD,
}

-- The strategy called `name` (snake_case) with `opts`; an error lists the names.
function strategy.named(name, opts)
  local make = strategy.by_name[name]
  if not make then
    local names = {}
    for k in pairs(strategy.by_name) do names[#names + 1] = k end
    table.sort(names)
    util.fail('unknown strategy ' .. tostring(name) .. '; available: ' .. table.concat(names, ', '))
  end
  return make(opts)
end

-- What a script's --strategy NAME and --scale-lr ask for: `named` with
-- scale_lr set only for the strategies that apply the mean of all workers'
-- gradients (all_reduce, ps_sync, sync_sgd), where the linear scaling rule holds.
local averaging = {all_reduce = true, ps_sync = true, sync_sgd = true}
function strategy.from_args(name, scale_lr, opts)
  opts = util.copy(opts or {})
  if averaging[name] then opts.scale_lr = scale_lr end
  return strategy.named(name, opts)
end

return strategy
