-- DOWNPOUR with SGD everywhere (the Distributed TensorFlow Guide's easy
-- variant): local SGD steps, accumulated gradients pushed every n_push steps
-- to servers that apply the experiment's SGD, variables fetched every n_fetch.
--   drun -np 2 scripts/strategies/downpour_easy.lua
require 'fashion_mnist_experiment'({strategy = 'downpour_easy'}, {n_push = 4, n_fetch = 4})
