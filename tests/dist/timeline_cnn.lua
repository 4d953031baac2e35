-- The seed CNN on 2,560 Fashion-MNIST images for tests/dist/timeline_test.py:
-- AllReduce through MPI in 64 KiB buckets (not node-shared memory, which sums
-- every bucket after backward: here exchanges can overlap backward), or the
-- synchronous parameter servers. --trace sets RunConfig's timeline; without it
-- `drun --timeline` names the file.
local drun = require 'drun'
local seed_cnn = require 'seed_cnn'
local args = drun.args{
  strategy = {'all_reduce', 'all_reduce or ps_sync'},
  trace = {'', "RunConfig's timeline (empty: drun --timeline's)"},
  model_dir = {'', 'checkpoints and summary.json'},
}

local data = drun.data
local train = data.fashion_mnist{split = 'train'}:take(2560):shuffle{seed = 1}:batch(64):prefetch(2)
local test = data.fashion_mnist{split = 'test'}:take(500):batch(250)
local strategy = args.strategy == 'ps_sync' and drun.strategy.ParameterServer{mode = 'sync'}
                 or drun.strategy.AllReduce{shared_memory = false, bucket_bytes = 65536}
local estimator = drun.Estimator{
  model = seed_cnn{seed = 7},
  loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
  optimizer = drun.optim.SGD{learning_rate = 0.01, momentum = 0.9},
  metrics = {'accuracy'},
  config = drun.RunConfig{model_dir = args.model_dir ~= '' and args.model_dir or nil,
                          save_checkpoints_steps = 10, save_summary_steps = 0,
                          timeline = args.trace ~= '' and args.trace or nil},
}
drun.Experiment{estimator = estimator, strategy = strategy, train_input = train,
                eval_input = test, epochs = 1}:run()
