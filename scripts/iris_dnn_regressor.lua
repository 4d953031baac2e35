-- The seed's DNNRegressor on iris (data/iris.csv): predicts petal_width from
-- sepal_length, sepal_width and petal_length with tf.estimator's defaults
-- (hidden units {3, 3}, relu, Adagrad 0.05), 1000 steps of batch 32. The 150
-- rows are shuffled with a fixed seed; the last 30 are held out for the
-- evaluation, whose loss (mean squared error, also reported as 'mse') goes to
-- model_dir/summary.json. The split is made here because data.csv cannot pick
-- feature columns nor skip rows.
--   drun scripts/iris_dnn_regressor.lua --model-dir runs/iris [--save iris.h5]
--   drun -np 2 scripts/iris_dnn_regressor.lua --strategy ps_sync   (or ps_async, ...)
-- Each worker takes --steps steps on its shard of the 120 training rows.
local drun = require 'drun'

local here = (arg and arg[0] or ''):match('^(.*)/') or '.'
local opt = drun.args{
  model_dir = {'runs/iris', 'checkpoints, summary.json and TensorBoard events; a rerun resumes from it'},
  steps = {1000, 'training steps of each worker'},
  seed = {1, 'seed of the weights and of the train/test split'},
  strategy = {'all_reduce', 'how workers share updates (all_reduce, ps_sync, ps_async, ...)'},
  save = {'', 'write the trained model to this Keras HDF5 file'},
  batch_size = {32, 'rows per step'},
  data = {here .. '/../data/iris.csv', 'the iris CSV file'},
}

-- Rows of numbers from the CSV (header skipped), in file order.
local rows = {}
local file = io.open(opt.data) or drun.core.fail(opt.data .. ': cannot open')
for line in file:lines() do
  local row = {}
  for cell in line:gmatch('[^,]+') do row[#row + 1] = tonumber(cell) end
  if #row == 5 then rows[#rows + 1] = row end  -- the header's cells are not numbers
end
file:close()

-- Fisher-Yates driven by Park and Miller's minimal standard generator, exact
-- in doubles: the same split under LuaJIT and PUC Lua, and in Python.
local state = opt.seed % 2147483646 + 1
for i = #rows, 2, -1 do
  state = state * 16807 % 2147483647
  local j = state % i + 1
  rows[i], rows[j] = rows[j], rows[i]
end
local function part(first, last)
  local x, y = {}, {}
  for i = first, last do
    local r = rows[i]
    x[#x + 1], y[#y + 1] = {r[1], r[2], r[3]}, {r[4]}
  end
  return drun.data.arrays{x = x, y = y}
end
local n_train = #rows - 30
local train, test = part(1, n_train), part(n_train + 1, #rows)

local estimator = drun.DNNRegressor{
  hidden_units = {3, 3},
  feature_columns = {'sepal_length', 'sepal_width', 'petal_length'},
  seed = opt.seed,
}

-- One epoch of as many shuffled passes as `steps` batches on this worker's shard need.
local shard = math.floor(n_train / math.max(1, drun.cluster().workers or 1))
local passes = math.ceil(opt.steps * opt.batch_size / shard)
local result = drun.Experiment{
  estimator = estimator,
  strategy = drun.strategy.named(opt.strategy, {}),
  train_input = train:shuffle{seed = opt.seed}:repeated(passes):batch(opt.batch_size),
  eval_input = test:batch(30),
  train_steps = opt.steps,
  model_dir = opt.model_dir,
}:run()

if opt.save ~= '' then estimator.model:save(opt.save) end  -- Keras HDF5, from the chief
if drun.is_chief() and result.eval then
  print(string.format('iris petal_width: held-out mean squared error %.4f after %d steps',
                      result.eval.loss, result.global_step))
end
