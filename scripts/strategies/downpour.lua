-- DOWNPOUR SGD (Dean et al. 2012): replicas step locally, push their
-- accumulated gradients every n_push steps and fetch the variables every
-- n_fetch steps; the servers apply Adagrad.
--   drun -np 2 scripts/strategies/downpour.lua
require 'fashion_mnist_experiment'({strategy = 'downpour'}, {n_push = 4, n_fetch = 4})
