-- drun.strategy: how workers keep their models in step. Each function returns
-- a description {name, options}; C++ (runtime/distributed/strategy_spec) checks the
-- options and builds the worker's and the servers' sides. In a single process
-- every strategy trains locally. docs/strategies.md gives each update rule.
local core = require 'drun.core'
local util = require 'drun.util'

-- The strategies and their options come from the C++ registry
-- (distributed/strategy_list.hpp), which also checks a description where the
-- script makes it. by_name holds the snake_case names that scripts take on
-- the command line (--strategy NAME), some with options fixed (ps_sync is
-- ParameterServer{mode = 'sync'}).
local strategy = {by_name = {}}
-- The presets that apply the mean of all workers' gradients (all_reduce,
-- ps_sync, sync_sgd), where the linear scaling rule holds.
local averaging = {}

for _, entry in ipairs(core.registry('strategies')) do
  local class = entry.names[1]
  local function make(opts)
    if opts ~= nil and type(opts) ~= 'table' then
      util.fail('strategy.' .. class .. ' expects a table of options, got ' .. type(opts))
    end
    local options = util.copy(opts)
    core.check('strategies', class, options)
    return {name = class, options = options}
  end
  for _, name in ipairs(entry.names) do strategy[name] = make end
  for _, preset in ipairs(entry.presets) do
    strategy.by_name[preset.name] = function(o)
      o = util.copy(o)
      for k, v in pairs(preset.options) do o[k] = v end
      return make(o)
    end
    averaging[preset.name] = preset.averaging
  end
end

-- "unknown strategy NAME (did you mean ...?); available: ..." for a name by_name lacks.
local function unknown(name)
  local names = {}
  for k in pairs(strategy.by_name) do names[#names + 1] = k end
  table.sort(names)
  return 'unknown strategy ' .. tostring(name) .. core.did_you_mean(tostring(name), names) ..
         '; available: ' .. table.concat(names, ', ')
end

-- The strategy called `name` (snake_case) with `opts`; an error lists the names.
function strategy.named(name, opts)
  local make = strategy.by_name[name]
  if not make then util.fail(unknown(name)) end
  return make(opts)
end

-- What a script's --strategy NAME and --scale-lr ask for: `named` with
-- scale_lr set only for the averaging presets. A name it lacks is the command
-- line's mistake: a usage error that names the flag, not the script's line.
function strategy.from_args(name, scale_lr, opts)
  if not strategy.by_name[name] then util.usage_error('--strategy: ' .. unknown(name)) end
  opts = util.copy(opts or {})
  if averaging[name] then opts.scale_lr = scale_lr end
  return strategy.named(name, opts)
end

return util.strict(strategy, 'drun.strategy')
