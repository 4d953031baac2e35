-- (tests/interop/interop_test.py) A small training run whose TensorBoard events (scalars, and weight
-- histograms after epochs 0, 2 and 4) and checkpoints the interop test reads with TensorBoard's and
-- h5py's own readers. A Lua hook prints
-- what the loop saw at every step (STEP step loss learning_rate accuracy), the
-- script the final evaluation (EVAL step loss accuracy), for comparison.
local drun = require 'drun'
local nn, data, optim = drun.nn, drun.data, drun.optim
local opt = drun.args{model_dir = ''}
assert(opt.model_dir ~= '', 'pass --model-dir')

local ds = require('toy_points')()

local estimator = drun.Estimator{
  model = nn.Sequential{nn.Dense{units = 8, activation = 'relu', input_shape = {2}}, nn.Dense{units = 2}, seed = 3},
  loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
  optimizer = optim.SGD{learning_rate = optim.schedules.ExponentialDecay{
    initial_learning_rate = 0.2, decay_steps = 10, decay_rate = 0.9}},
  metrics = {'accuracy'},
  config = drun.RunConfig{model_dir = opt.model_dir, save_summary_steps = 5, save_checkpoints_steps = 10,
                          histogram_freq = 2},
}
local recorder = {after_step = function(_, s)
  print(string.format('STEP %d %.9g %.9g %.9g', s.step, s.loss, s.learning_rate, s.metrics.accuracy))
end}
local r = estimator:train{input = ds:shuffle{seed = 1}:batch(16), eval_input = ds:batch(64), epochs = 5,
                          hooks = {recorder}}
print(string.format('EVAL %d %.9g %.9g', r.global_step, r.eval.loss, r.eval.accuracy))
