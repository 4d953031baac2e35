-- Synchronous elastic averaging SGD (Zhang, Choromanska and LeCun 2015):
-- every tau steps each worker moves towards the centre by alpha (w - c) and
-- the centre by the sum of those moves.
--   drun -np 2 scripts/strategies/easgd.lua
require 'fashion_mnist_experiment'({strategy = 'easgd'}, {tau = 4, alpha = 0.45})
