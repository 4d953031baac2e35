-- Synchronous AGN: every worker's normalised change of lambda local steps is
-- added to the centre in one round, then all workers continue from it.
--   drun -np 2 scripts/strategies/sagn.lua
require 'fashion_mnist_experiment'({strategy = 'sagn'}, {lambda = 4})
