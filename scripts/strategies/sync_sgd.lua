-- Synchronous SGD with a learning rate per worker: the servers apply the mean
-- of lr_i / lr * g_i over the workers each step.
--   drun -np 2 scripts/strategies/sync_sgd.lua
require 'fashion_mnist_experiment'({strategy = 'sync_sgd'}, {learning_rates = {0.01, 0.01}})
