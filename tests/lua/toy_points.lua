-- The tests' toy problem: 64 points on a grid in [-1, 1]^2, labelled by the
-- side of the line x0 + 0.5 x1 = 0.1 they fall on (2 classes).
--   local ds = require('toy_points')()   -- a drun data set
local drun = require 'drun'

return function()
  local x, y = {}, {}
  for i = 1, 64 do
    local a, b = (i % 8) / 4 - 1, math.floor(i / 8) / 4 - 1
    x[i] = {a, b}
    y[i] = (a + 0.5 * b > 0.1) and 1 or 0
  end
  return drun.data.arrays{x = x, y = y}
end
