-- Hogwild (Niu et al. 2011): the workers of the node update one shared copy
-- of the variables, held by the node's parameter server, without locks.
--   drun -np 2 scripts/strategies/hogwild.lua
require 'fashion_mnist_experiment'({strategy = 'hogwild'}, {})
