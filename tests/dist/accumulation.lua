-- A small Dense model on 512 made-up points with gradient_accumulation_steps
-- = 4, for tests/dist/accumulation_test.py: AllReduce through MPI (its bucket
-- exchanges are events of their own, not one shared-memory sum) or the
-- synchronous parameter servers, RunConfig's timeline in --trace.
local drun = require 'drun'
local args = drun.args{
  strategy = {'all_reduce', 'all_reduce or ps_sync'},
  trace = {'', "RunConfig's timeline"},
  model_dir = {'', 'checkpoints and summary.json'},
}

local x, y = {}, {}
local state = 12345
local function rand()  -- a small LCG: the same points on every rank and platform
  state = (state * 1103515245 + 12345) % 2147483648
  return state / 2147483648 * 2 - 1
end
for i = 1, 512 do
  local a, b = rand(), rand()
  x[i] = {a, b}
  y[i] = (a + 0.5 * b > 0.1) and 1 or 0
end

local strategy = args.strategy == 'ps_sync' and drun.strategy.ParameterServer{mode = 'sync'}
                 or drun.strategy.AllReduce{shared_memory = false}
local estimator = drun.Estimator{
  model = drun.nn.Sequential{drun.nn.Dense{units = 8, activation = 'relu', input_shape = {2}},
                             drun.nn.Dense{units = 2}, seed = 3},
  loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
  optimizer = drun.optim.SGD{learning_rate = 0.1, momentum = 0.9, gradient_accumulation_steps = 4},
  config = drun.RunConfig{model_dir = args.model_dir ~= '' and args.model_dir or nil,
                          save_summary_steps = 0,
                          timeline = args.trace ~= '' and args.trace or nil},
}
drun.Experiment{estimator = estimator, strategy = strategy,
                train_input = drun.data.arrays{x = x, y = y}:batch(16), epochs = 1}:run()
