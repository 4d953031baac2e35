-- Synchronous data parallelism with one allreduce of the gradients per step
-- (Horovod; TensorFlow's MultiWorkerMirroredStrategy), for comparison.
--   drun -np 2 scripts/strategies/all_reduce.lua
require 'fashion_mnist_experiment'({strategy = 'all_reduce'}, {})
