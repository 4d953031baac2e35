-- Loads the Fashion-MNIST test split from --data-dir and prints its size.
local drun = require 'drun'
local test = drun.data.fashion_mnist{split = 'test'}
print(string.format('examples %d shape %s', test:size(), table.concat(test:shape(), 'x')))
