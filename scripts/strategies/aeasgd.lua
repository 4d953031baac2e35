-- Asynchronous EASGD (Zhang, Choromanska and LeCun 2015): each worker, every
-- tau steps on its own, exchanges the elastic move with the centre.
--   drun -np 2 scripts/strategies/aeasgd.lua
require 'fashion_mnist_experiment'({strategy = 'aeasgd'}, {tau = 4, alpha = 0.45})
