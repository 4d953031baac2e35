-- Conv2D then Dense without a Flatten: the error names the Dense layer and the
-- 4-d shape it got.
local drun = require 'drun'
local nn = drun.nn
local model = nn.Sequential{
  nn.Conv2D{filters = 4, kernel_size = 3, input_shape = {8, 8, 1}},
  nn.Dense{units = 3},
}
model:summary()
