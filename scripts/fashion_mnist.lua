-- The seed CNN on Fashion-MNIST (Debian's dataset-fashion-mnist):
-- Conv2D 32 3x3 relu, MaxPool 2, Flatten, Dense 64 relu, Dense 10 logits;
-- SGD with momentum 0.9, learning rate 0.01, batch 64, 3 epochs.
--   drun scripts/fashion_mnist.lua --epochs 3 --model-dir runs/fashion
--   drun -np 2 scripts/fashion_mnist.lua --strategy downpour
-- --strategy takes any strategy's snake_case name (all_reduce, ps_async,
-- ps_sync, downpour, downpour_easy, hogwild, agn, sagn, easgd, aeasgd,
-- aeamsgd, dyn_sgd, sync_sgd) with its default parameters;
-- scripts/strategies/*.lua set them explicitly.
local experiment = require 'strategies.fashion_mnist_experiment'
experiment()
