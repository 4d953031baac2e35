-- A strategy option out of range: the error names the strategy, the option
-- and this file's line.
local drun = require 'drun'
local model = drun.nn.Sequential{drun.nn.Dense{units = 2, input_shape = {3}}}
model:compile{optimizer = 'sgd', loss = 'mse'}
local ds = drun.data.arrays{x = {{1, 2, 3}, {4, 5, 6}}, y = {{1, 0}, {0, 1}}}
model:fit{x = ds, epochs = 1, strategy = drun.strategy.EASGD{alpha = 1.5}}
