-- A canned classifier (--canned DNNClassifier or LinearClassifier) on all 150
-- iris rows read by data.csv (label 'species', four features), evaluated on
-- the same rows: checks the canned estimators and the CSV reader end to end.
local drun = require 'drun'
local opt = drun.args{model_dir = '', data = '../../data/iris.csv', canned = 'DNNClassifier', epochs = 40}
assert(opt.model_dir ~= '', 'pass --model-dir')

local iris = drun.data.csv{path = opt.data, label = 'species'}
local make = assert(drun[opt.canned], 'no canned estimator ' .. opt.canned)
local options = {n_classes = 3, feature_columns = {'sepal_length', 'sepal_width', 'petal_length', 'petal_width'},
                 seed = 1}
if opt.canned:match('^DNN') then options.hidden_units = {10, 10} end

local result = drun.Experiment{
  estimator = make(options),
  strategy = drun.strategy.AllReduce{},
  train_input = iris:shuffle{seed = 1}:batch(16),
  eval_input = iris:batch(150),
  epochs = opt.epochs,
  model_dir = opt.model_dir,
}:run()
print(string.format('%s eval accuracy %.4f loss %.4f', opt.canned, result.eval.accuracy, result.eval.loss))
