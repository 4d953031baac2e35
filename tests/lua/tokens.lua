-- Token ids from Lua tables through nn.Embedding and nn.LayerNormalization:
-- the class of a sequence of 6 ids below 20 is the parity of its first id.
-- Named and positional Embedding build the same model; the model learns the
-- task; a bad id stops predict naming the layer and the id.
local drun = require 'drun'
local nn, data = drun.nn, drun.data

local x, y = {}, {}
local state = 777
local function rand_id()  -- a small LCG, so the data do not depend on Lua's math.random
  state = (state * 1103515245 + 12345) % 2147483648
  return math.floor(state / 2147483648 * 20)
end
for i = 1, 128 do
  local row = {}
  for t = 1, 6 do row[t] = rand_id() end
  x[i] = row
  y[i] = row[1] % 2
end
local ds = data.arrays{x = x, y = y}

local function build(embedding)
  return nn.Sequential{
    embedding,
    nn.LayerNormalization{epsilon = 1e-6},
    nn.Flatten(),
    nn.Dense(2),
    seed = 5,
  }
end
local named = build(nn.Embedding{input_dim = 20, output_dim = 4, input_shape = {6}})
local model = build(nn.Embedding(20, 4, {input_shape = {6}}))
assert(named:count_params() == model:count_params() and model:count_params() == 80 + 8 + 50,
       'params: ' .. model:count_params())
print(model:summary())

model:compile{optimizer = drun.optim.Adam{learning_rate = 0.05},
              loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
              metrics = {'accuracy'}}
model:fit{x = ds:shuffle{seed = 1}:batch(16), epochs = 15}
local r = model:evaluate(ds:batch(64))
print(string.format('token accuracy %.4f', r.accuracy))

x[3][2] = 20
local ok, err = pcall(function() return model:predict(data.arrays{x = x, y = y}:batch(32)) end)
assert(not ok, 'id 20 of input_dim 20 was accepted')
print('bad id: ' .. tostring(err))
