-- The functional API: a layer called on several nodes as arguments, one
-- node twice (self-attention), and a mismatch named by the layer.
local drun = require 'drun'
local nn = drun.nn

local x = nn.Input{shape = {6, 8}}
local y = nn.MultiHeadAttention{num_heads = 2, key_dim = 4, use_causal_mask = true}(x, x)
local z = nn.MultiHeadAttention(1, 2, {value_dim = 3}){y, x}
local outputs = nn.Dense(3)(nn.Flatten()(nn.Add(){x, z}))
local model = nn.Model{inputs = x, outputs = outputs, name = 'attend', seed = 1}
model:summary()
print('params ' .. model:count_params())

local ok, err = pcall(function()
  local a = nn.Input{shape = {6, 8}}
  nn.Model{inputs = a, outputs = nn.MultiHeadAttention(2, 4)(a, nn.Flatten()(a))}
end)
assert(not ok)
print(err)
