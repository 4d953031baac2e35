-- Bidirectional end to end: the data of train_sequences.lua (whether the
-- first feature sums to more than the second over 8 steps), learnt by a
-- Bidirectional LSTM (positional form, concatenated) and a Bidirectional
-- GRU (table form, summed); then a wrapped layer that is not recurrent,
-- refused. The model directory is the first argument.
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
  nn.Bidirectional(nn.LSTM{units = 8, return_sequences = true}, {input_shape = {8, 2}}),
  nn.Bidirectional{layer = nn.GRU(6), merge_mode = 'sum'},
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

local ok, err = pcall(function()
  return nn.Sequential{nn.Bidirectional(nn.Dense(3), {input_shape = {8, 2}})}
end)
assert(not ok)
print('refused: ' .. tostring(err))
