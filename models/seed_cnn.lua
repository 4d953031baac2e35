-- The seed CNN of the Fashion-MNIST tutorial: Conv2D 32 3x3 relu, MaxPool 2,
-- Flatten, Dense 64 relu, Dense 10 logits (347,146 parameters).
--   local seed_cnn = require 'seed_cnn'
--   local model = seed_cnn{seed = 42}
local nn = require('drun').nn

return function(opts)
  opts = opts or {}
  return nn.Sequential{
    nn.Conv2D{filters = 32, kernel_size = 3, activation = 'relu', input_shape = {28, 28, 1}},
    nn.MaxPool2D{pool_size = 2},
    nn.Flatten{},
    nn.Dense{units = 64, activation = 'relu'},
    nn.Dense{units = 10},
    seed = opts.seed,
  }
end
