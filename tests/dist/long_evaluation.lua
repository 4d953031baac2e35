-- A long evaluation between two fits (tests/dist/stall_test.py): the chief
-- evaluates for at least `seconds` (default 30) while the other worker waits
-- for it in the second fit's first exchange. The stall inspector must not take
-- that wait for a stall: the chief is busy, not silent. Prints
-- "evaluated for S s" and, on the chief, "done".
local drun = require 'drun'
local nn, data, optim = drun.nn, drun.data, drun.optim
local args = drun.args{seconds = {30, 'how long the chief evaluates'}}

local train = data.fashion_mnist{split = 'train'}:take(2048):shuffle{seed = 1}:batch(64)
local test = data.fashion_mnist{split = 'test'}:batch(1000)
local model = nn.Sequential{
  nn.Conv2D{filters = 8, kernel_size = 3, activation = 'relu', input_shape = {28, 28, 1}},
  nn.MaxPool2D{pool_size = 2},
  nn.Flatten{},
  nn.Dense{units = 10},
  seed = 3,
}
model:compile{
  optimizer = optim.SGD{learning_rate = 0.01},
  loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
  metrics = {'accuracy'},
}
local strategy = drun.strategy.AllReduce{}
model:fit{x = train, steps = 10, strategy = strategy}
if drun.is_chief() then
  local start = os.time()
  while os.time() - start < args.seconds do model:evaluate(test) end
  print(string.format('evaluated for %d s', os.time() - start))
  io.stdout:flush()
end
model:fit{x = train, steps = 20, strategy = strategy}
if drun.is_chief() then print('done') end
