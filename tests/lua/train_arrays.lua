-- Tiny end-to-end training: a linearly separable 2-class problem from Lua
-- tables, a Dense model, 20 epochs; the model directory is the first argument.
local drun = require 'drun'
local nn, data, optim = drun.nn, drun.data, drun.optim
local opt = drun.args{model_dir = '', loss_scale = 0, precision = ''}
if opt.precision ~= '' then drun.mixed_precision.set_global_policy(opt.precision) end
assert(opt.model_dir ~= '', 'pass --model-dir')

-- 64 points in [-1, 1]^2; the class is which side of x0 + 0.5 x1 = 0.1 they lie on.
local x, y = {}, {}
local state = 12345
local function rand()  -- a small LCG, so the data do not depend on Lua's math.random
  state = (state * 1103515245 + 12345) % 2147483648
  return state / 2147483648 * 2 - 1
end
for i = 1, 64 do
  local a, b = rand(), rand()
  x[i] = {a, b}
  y[i] = (a + 0.5 * b > 0.1) and 1 or 0
end
local ds = data.arrays{x = x, y = y}

local model = nn.Sequential{
  nn.Dense{units = 8, activation = 'relu', input_shape = {2}},
  nn.Dense{units = 2},
  seed = 3,
}
local estimator = drun.Estimator{
  model = model,
  loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
  -- --loss-scale S: the same in a LossScaleOptimizer starting at S.
  optimizer = opt.loss_scale > 0
    and optim.LossScaleOptimizer{inner_optimizer = optim.SGD{learning_rate = 0.1, momentum = 0.9},
                                 initial_scale = opt.loss_scale, dynamic_growth_steps = 30}
    or optim.SGD{learning_rate = 0.1, momentum = 0.9},
  metrics = {'accuracy'},
}
local result = drun.Experiment{
  estimator = estimator,
  strategy = drun.strategy.AllReduce{},
  train_input = ds:shuffle{seed = 1}:batch(16),
  eval_input = ds:batch(64),
  epochs = 20,
  model_dir = opt.model_dir,
}:run()
print(string.format('eval accuracy %.4f loss %.4f', result.eval.accuracy, result.eval.loss))
