-- drun.data.numpy (--reader numpy) or drun.data.hdf5 (--reader hdf5) on
-- files given on the command line (hdf5: --path a.h5,b.h5 for a list of files,
-- --stream true|false to stream or not). Prints the examples
-- and their shape; each example's sum of x (an echo model: Flatten, then one
-- Dense unit of ones, no bias), for the whole set and for each half of
-- ds:shard(2, i); and with --onehot, the accuracy of an identity model,
-- which is 1 exactly when every x is its own label's one-hot row.
local drun = require 'drun'
local nn = drun.nn

local opt = drun.args{reader = 'numpy', path = '', x = '', y = '', onehot = false, stream = ''}
local path = opt.path ~= '' and opt.path or nil
if path and path:find(',') then
  local list = {}
  for p in path:gmatch('[^,]+') do list[#list + 1] = p end
  path = list
end
local stream = nil
if opt.stream ~= '' then stream = opt.stream == 'true' end
local ds = drun.data[opt.reader]{path = path, x = opt.x, y = opt.y, stream = stream}
print(string.format('examples %d shape %s', ds:size(), table.concat(ds:shape(), 'x')))
local echo = nn.Sequential{nn.Flatten{input_shape = ds:shape()},
                           nn.Dense{units = 1, use_bias = false, kernel_initializer = 'ones'}}
local function sums(d)
  local out = {}
  for i, row in ipairs(echo:predict(d)) do out[i] = string.format('%g', row[1]) end
  return table.concat(out, ' ')
end
print('sums ' .. sums(ds))
for i = 0, 1 do print(string.format('shard %d: %s', i, sums(ds:shard(2, i)))) end
if opt.onehot then
  local identity = nn.Sequential{nn.Activation{activation = 'linear', input_shape = ds:shape()}}
  identity:compile{optimizer = 'sgd', loss = 'sparse_categorical_crossentropy', metrics = {'accuracy'}}
  print(string.format('accuracy %.4f', identity:evaluate(ds).accuracy))
end
