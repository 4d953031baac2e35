-- Recurrent layers end to end: sequences of 8 steps with 2 features, the
-- class being whether the first feature sums to more than the second; an
-- LSTM, a GRU and a SimpleRNN (positional and table forms) learn it from Lua
-- tables. The model directory is the first argument.
local drun = require 'drun'
local nn, data, optim = drun.nn, drun.data, drun.optim
local opt = drun.args{model_dir = ''}
assert(opt.model_dir ~= '', 'pass --model-dir')

local state = 4321
local function rand()  -- a small LCG, so the data do not depend on Lua's math.random
  state = (state * 1103515245 + 12345) % 2147483648
  return state / 2147483648 * 2 - 1
end
local x, y = {}, {}
for i = 1, 128 do
  local seq, a, b = {}, 0, 0
  for t = 1, 8 do
    seq[t] = {rand(), rand()}
    a, b = a + seq[t][1], b + seq[t][2]
  end
  x[i], y[i] = seq, (a > b) and 1 or 0
end
local ds = data.arrays{x = x, y = y}

local model = nn.Sequential{
  nn.LSTM{units = 12, return_sequences = true, input_shape = {8, 2}},
  nn.GRU{units = 10, return_sequences = true, go_backwards = true},
  nn.SimpleRNN(8),
  nn.Dense{units = 2},
  seed = 5,
}
local result = drun.Experiment{
  estimator = drun.Estimator{
    model = model,
    loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
    optimizer = optim.Adam{learning_rate = 0.01},
    metrics = {'accuracy'},
  },
  strategy = drun.strategy.AllReduce{},
  train_input = ds:shuffle{seed = 1}:batch(16),
  eval_input = ds:batch(128),
  epochs = 30,
  model_dir = opt.model_dir,
}:run()
print(string.format('eval accuracy %.4f loss %.4f', result.eval.accuracy, result.eval.loss))
print(string.format('params %d', model:count_params()))
