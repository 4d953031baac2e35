-- Asynchronous EASGD with Nesterov momentum on the workers (EAMSGD, Zhang,
-- Choromanska and LeCun 2015).
--   drun -np 2 scripts/strategies/aeamsgd.lua
require 'fashion_mnist_experiment'({strategy = 'aeamsgd'},
                                              {tau = 4, alpha = 0.45, momentum = 0.9})
