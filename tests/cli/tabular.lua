-- A tabular regression of the CLI tests: 256 rows of 4 features, y their
-- weighted sum, a small DNN. Each step is slowed to about --step-ms so that
-- the run lasts long enough for its progress lines to be counted.
--   drun tests/cli/tabular.lua --steps 300            (bounded by steps alone)
--   drun tests/cli/tabular.lua --epochs 2             (bounded by epochs)
local drun = require 'drun'
local nn = drun.nn

local opt = drun.args{
  steps = {0, 'stop at this global step (0: run the epochs)'},
  epochs = {1, 'passes over the rows'},
  batch_size = {8, 'rows per step'},
  step_ms = {10, 'milliseconds each step is made to last at least'},
  model_dir = {'', 'where checkpoints, events and summary.json go'},
  scale = {true, 'scale the features to [-1, 1]'},
}

local x, y = {}, {}
for i = 1, 256 do
  local r = {(i % 7) / 3 - 1, (i % 11) / 5 - 1, (i % 13) / 6 - 1, (i % 5) / 2 - 1}
  if not opt.scale then for j = 1, 4 do r[j] = r[j] * 10 end end
  x[i], y[i] = r, {0.5 * r[1] - r[2] + 0.25 * r[3] + r[4]}
end
local rows = drun.data.arrays{x = x, y = y}

-- Each step lasts at least --step-ms of wall time: LuaJIT's FFI sleeps in
-- poll(2) (no descriptors, a timeout), leaving the CPU to the rest of the
-- machine. A Lua without FFI busy-waits on os.clock, which counts the CPU time
-- of every thread of the process, so there a step may end early when other
-- threads spin.
local has_ffi, ffi = pcall(require, 'ffi')
local pause
if has_ffi and pcall(ffi.cdef, 'int poll(void *fds, unsigned long nfds, int timeout);') then
  pause = function(ms) ffi.C.poll(nil, 0, ms) end
else
  pause = function(ms)
    local until_ = os.clock() + ms / 1000
    while os.clock() < until_ do end
  end
end
local slow = {after_step = function() pause(opt.step_ms) end}

local estimator = drun.Estimator{
  model = nn.Sequential{nn.Dense{units = 8, activation = 'relu', input_shape = {4}}, nn.Dense{units = 1},
                        seed = 1},
  loss = 'mse',
  optimizer = drun.optim.SGD{learning_rate = 0.05},
  config = drun.RunConfig{model_dir = opt.model_dir ~= '' and opt.model_dir or nil},
}
local result = estimator:train{input = rows:shuffle{seed = 1}:batch(opt.batch_size),
                               epochs = opt.steps == 0 and opt.epochs or nil,
                               steps = opt.steps > 0 and opt.steps or nil, hooks = {slow}}
print(string.format('tabular: global step %d, loss %.4f', result.global_step, result.train.loss))
