-- For tests/dist/jsrun_test.py: each rank writes what its starter gave it
-- (role, task, GPU variables) to OUT/rank-<rank>.json and trains nothing. In
-- plan mode it declares a fit with parameter servers, so that the launcher
-- places them.
local drun = require 'drun'
local args = drun.args{out = {'', 'the folder each rank writes its file to'}}
local c = drun.context()
if c.plan then
  local nn = drun.nn
  local m = nn.Sequential{nn.Dense{units = 2, input_shape = {2}}}
  m:compile{optimizer = 'sgd', loss = 'sparse_categorical_crossentropy'}
  m:fit{x = drun.data.arrays{x = {{0, 1}, {1, 0}}, y = {0, 1}}:batch(2),
        strategy = drun.strategy.ParameterServer{mode = 'sync'}}
  return
end
local function env(name) return string.format('%q', os.getenv(name) or 'unset') end
local f = assert(io.open(args.out .. '/rank-' .. c.rank .. '.json', 'w'))
f:write('{"rank": ', c.rank, ', "role": "', c.role, '", "task_index": ', c.task_index,
        ', "DRUN_ROLE": ', env('DRUN_ROLE'), ', "CUDA_VISIBLE_DEVICES": ',
        env('CUDA_VISIBLE_DEVICES'), ', "JSM_NAMESPACE_RANK": ', env('JSM_NAMESPACE_RANK'), '}\n')
f:close()
