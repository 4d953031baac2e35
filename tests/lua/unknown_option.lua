-- A misspelt layer option: the error names it, lists the valid ones and
-- points at this file.
local drun = require 'drun'
local nn = drun.nn
local model = nn.Sequential{
  nn.Dense{units = 3, unitz = 4, input_shape = {4}},
}
model:summary()
