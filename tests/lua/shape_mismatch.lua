-- Conv2D after a Flatten: the error names the second Conv2D layer and the
-- flat shape it got.
local drun = require 'drun'
local nn = drun.nn
local model = nn.Sequential{
  nn.Conv2D{filters = 4, kernel_size = 3, input_shape = {8, 8, 1}},
  nn.Flatten{},
  nn.Conv2D{filters = 2, kernel_size = 3},
}
model:summary()
