-- Asynchronous SGD on parameter servers (TensorFlow's between-graph
-- replication): every worker pushes its gradients, the servers apply the
-- experiment's optimizer at once and send the variables back.
--   drun -np 2 scripts/strategies/ps_async.lua
require 'fashion_mnist_experiment'({strategy = 'ps_async'}, {placement = 'greedy'})
