-- Accumulated gradient normalisation (Hermans et al. 2017): lambda local
-- steps, then the change divided by lambda is committed to the servers
-- asynchronously and the variables fetched back.
--   drun -np 2 scripts/strategies/agn.lua
require 'fashion_mnist_experiment'({strategy = 'agn'}, {lambda = 4})
