-- Synchronous SGD on parameter servers (TensorFlow's SyncReplicasOptimizer):
-- each step the servers average the first replicas_to_aggregate gradients,
-- drop stale ones (backup workers), apply once and release the workers.
--   drun -np 2 scripts/strategies/ps_sync.lua
require 'fashion_mnist_experiment'({strategy = 'ps_sync'},
                                              {replicas_to_aggregate = 0, backup_workers = 0})
