-- Recurrent states in the functional API: return_state gives a node per
-- output (Lua's multiple values for Keras' list), initial_state takes them
-- (after the input or inside its list), and a model trains through them.
local drun = require 'drun'
local nn = drun.nn
local opt = drun.args{model_dir = ''}
assert(opt.model_dir ~= '', 'pass --model-dir')

local x = nn.Input{shape = {5, 3}}
local _, h, c = nn.LSTM{units = 4, return_state = true}(x)
local y = nn.LSTM{units = 4, return_sequences = true}(x, {initial_state = {h, c}})
local out, fh, bh = nn.Bidirectional(nn.GRU{units = 2, return_state = true})(y)
local _, s = nn.SimpleRNN{units = 2, return_state = true}{y, initial_state = {fh}}
local outputs = nn.Dense(2)(nn.Concatenate(){out, bh, s, c})
local model = nn.Model{inputs = x, outputs = outputs, name = 'seq2seq', seed = 1}
model:summary()
print('params ' .. model:count_params())

local xs, ys = {}, {}
for i = 1, 32 do
  local seq = {}
  for t = 1, 5 do seq[t] = {math.sin(i + t), math.cos(i * t), (i + t) % 3 - 1} end
  xs[i], ys[i] = seq, {math.sin(i), math.cos(i)}
end
local ds = drun.data.arrays{x = xs, y = ys}
local result = drun.Experiment{
  estimator = drun.Estimator{model = model, loss = drun.losses.MeanSquaredError{},
                             optimizer = drun.optim.Adam{learning_rate = 0.01}},
  strategy = drun.strategy.AllReduce{},
  train_input = ds:batch(8),
  eval_input = ds:batch(32),
  epochs = 10,
  model_dir = opt.model_dir,
}:run()
print(string.format('eval loss %.4f', result.eval.loss))

local ok, err = pcall(function()
  local a = nn.Input{shape = {5, 3}}
  local _, ha = nn.LSTM{units = 4, return_state = true}(a)
  nn.Model{inputs = a, outputs = ha}
end)
assert(not ok)
print(err)
ok, err = pcall(function()
  local a = nn.Input{shape = {5, 3}}
  local _, ha = nn.GRU{units = 4, return_state = true}(a)
  nn.Model{inputs = a, outputs = nn.LSTM{units = 4}(a, {initial_state = {ha}})}
end)
assert(not ok)
print(err)
