-- Two fits in one script under a parameter-server strategy: the servers of
-- the first return when it ends, and the second fit gets new ones.
local drun = require 'drun'
local nn, data, optim = drun.nn, drun.data, drun.optim
local ds = require('toy_points')()
local model = nn.Sequential{nn.Dense{units = 8, activation = 'relu', input_shape = {2}}, nn.Dense{units = 2}, seed = 3}
model:compile{optimizer = optim.SGD{learning_rate = 0.1}, metrics = {'accuracy'},
              loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true}}
local strategy = drun.strategy.ParameterServer{mode = 'sync'}
local a = model:fit{x = ds:batch(8), epochs = 2, strategy = strategy}
local b = model:fit{x = ds:batch(8), epochs = 2, strategy = strategy}
if drun.is_chief() then print(string.format('fits done: steps %d then %d', a.global_step, b.global_step)) end
