-- drun.data.idx on a pair of files given on the command line: prints the
-- examples and their shape, then each of the first three examples' pixel sum
-- and label (an echo model: Flatten, then one Dense unit of ones, no bias).
local drun = require 'drun'
local nn = drun.nn

local opt = drun.args{images = '', labels = ''}
local ds = drun.data.idx{images = opt.images, labels = opt.labels}
print(string.format('examples %d shape %s', ds:size(), table.concat(ds:shape(), 'x')))
local echo = nn.Sequential{nn.Flatten{input_shape = ds:shape()},
                           nn.Dense{units = 1, use_bias = false, kernel_initializer = 'ones'}}
for i, row in ipairs(echo:predict(ds:take(3))) do print(string.format('sum %d %.0f', i, row[1])) end
