-- The functional API: a residual block with an Add of two branches.
local drun = require 'drun'
local nn = drun.nn

local inputs = nn.Input{shape = {8, 8, 3}}
local a = nn.Conv2D{filters = 3, kernel_size = 3, padding = 'same', activation = 'relu'}(inputs)
local b = nn.Conv2D{filters = 3, kernel_size = 3, padding = 'same'}(a)
local sum = nn.Add{}{b, inputs}
local h = nn.Activation{activation = 'relu'}(sum)
h = nn.GlobalAveragePooling2D{}(h)
local outputs = nn.Dense{units = 4}(h)
local model = nn.Model{inputs = inputs, outputs = outputs, name = 'resblock', seed = 1}
model:summary()
local shape = model:output_shape()
assert(#shape == 1 and shape[1] == 4, 'output shape')
print('params ' .. model:count_params())
