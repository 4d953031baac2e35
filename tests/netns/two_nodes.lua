-- Two-node AllReduce run for tests/netns/two_node_test.py: a small Dense model
-- on generated data, 3 epochs. Every rank prints "rank R host H role ROLE
-- workers N"; the chief then prints "final loss L" from fit's result.
local drun = require 'drun'
local nn, data, optim = drun.nn, drun.data, drun.optim

-- 256 points in [-1, 1]^8; the class is the sign of a fixed linear form.
local x, y = {}, {}
local state = 4242
local function rand()  -- a small LCG, so the data do not depend on Lua's math.random
  state = (state * 1103515245 + 12345) % 2147483648
  return state / 2147483648 * 2 - 1
end
for i = 1, 256 do
  local row, s = {}, 0
  for j = 1, 8 do
    row[j] = rand()
    s = s + row[j] * (j % 2 == 0 and 1 or -0.5)
  end
  x[i] = row
  y[i] = s > 0 and 1 or 0
end
local ds = data.arrays{x = x, y = y}

local model = nn.Sequential{
  nn.Dense{units = 16, activation = 'relu', input_shape = {8}},
  nn.Dense{units = 2},
  seed = 7,
}
model:compile{
  optimizer = optim.SGD{learning_rate = 0.1},
  loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
  metrics = {'accuracy'},
}
local c = drun.cluster()
print(string.format('rank %d host %s role %s workers %d', c.index, c.host, c.role, c.workers))
io.stdout:flush()
local r = model:fit{x = ds:batch(16), epochs = 3, strategy = drun.strategy.AllReduce{}}
if drun.is_chief() then
  print(string.format('final loss %.6f', r.train.loss))
end
io.stdout:flush()
