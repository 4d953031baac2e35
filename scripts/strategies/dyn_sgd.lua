-- Staleness-aware asynchronous SGD (Zhang, Gupta, Lian and Liu 2016): the
-- servers divide each gradient's learning rate by its staleness.
--   drun -np 2 scripts/strategies/dyn_sgd.lua
require 'fashion_mnist_experiment'({strategy = 'dyn_sgd'}, {})
