-- Canned estimators after tf.estimator: DNNClassifier, DNNRegressor,
-- LinearClassifier and LinearRegressor. Each builds a Sequential of Dense
-- layers (drun.nn) and returns a drun.Estimator with tf.estimator's loss and
-- defaults, so that TF users' scripts need few changes:
--   drun.DNNRegressor{hidden_units = {3, 3}, feature_columns = 3}
-- feature_columns is the number of input features or a list of their names.
-- Classifiers emit n_classes logits (also for n_classes = 2, where TF uses one
-- logistic logit): sparse categorical cross-entropy, metric 'accuracy'.
-- Regressors emit label_dimension values: mean squared error, metric 'mse'.
local util = require 'drun.util'
local nn = require 'drun.nn'
local optim = require 'drun.optim'
local losses = require 'drun.losses'
local Estimator = require('drun.estimator').Estimator

local canned = {}

local function count(what, key, v)
  if type(v) ~= 'number' or v < 1 or v % 1 ~= 0 then
    util.fail(what .. ': ' .. key .. ' must be a positive integer, got ' .. tostring(v))
  end
  return v
end

local function n_classes(what, v)
  if v ~= nil and (type(v) ~= 'number' or v < 2 or v % 1 ~= 0) then
    util.fail(what .. ': n_classes must be an integer >= 2, got ' .. tostring(v))
  end
  return v or 2
end

local function n_features(what, fc)
  if type(fc) == 'table' and #fc > 0 then
    for i, name in ipairs(fc) do
      if type(name) ~= 'string' then util.fail(what .. ': feature_columns[' .. i .. '] is not a name') end
    end
    return #fc
  end
  if type(fc) ~= 'number' then
    util.fail(what .. ': feature_columns must be the number of features or a list of their names')
  end
  return count(what, 'feature_columns', fc)
end

-- The Estimator around `layers` with a classifier's or a regressor's head.
local function estimator(opts, layers, classifier, default_optimizer)
  layers.seed = opts.seed
  local config = util.copy(opts.config)
  if opts.model_dir then config.model_dir = opts.model_dir end
  return Estimator{
    model = nn.Sequential(layers),
    loss = classifier and losses.SparseCategoricalCrossentropy{from_logits = true} or losses.MeanSquaredError{},
    optimizer = opts.optimizer or default_optimizer,
    metrics = {classifier and 'accuracy' or 'mse'},
    config = config,
  }
end

local common = {'feature_columns', 'optimizer', 'config', 'model_dir', 'seed'}
local function keys(...)
  local out = util.copy(common)
  for _, k in ipairs {...} do out[#out + 1] = k end
  return out
end

-- Hidden Dense layers (activation, then dropout if any) and the output layer.
local function dnn(what, opts, outputs)
  local n = n_features(what, opts.feature_columns)
  if type(opts.hidden_units) ~= 'table' or #opts.hidden_units == 0 then
    util.fail(what .. ': hidden_units must be a list of layer sizes, e.g. {10, 10}')
  end
  if opts.dropout ~= nil and (type(opts.dropout) ~= 'number' or opts.dropout < 0 or opts.dropout >= 1) then
    util.fail(what .. ': dropout must be a rate in [0, 1), got ' .. tostring(opts.dropout))
  end
  local layers = {}
  for i, units in ipairs(opts.hidden_units) do
    layers[#layers + 1] = nn.Dense{units = count(what, 'hidden_units[' .. i .. ']', units),
                                   activation = opts.activation_fn or 'relu', input_shape = i == 1 and {n} or nil}
    if opts.dropout and opts.dropout > 0 then layers[#layers + 1] = nn.Dropout{rate = opts.dropout} end
  end
  layers[#layers + 1] = nn.Dense{units = outputs}
  return layers
end

-- tf.estimator's DNN default: Adagrad, learning rate 0.05.
local function dnn_optimizer() return optim.Adagrad{learning_rate = 0.05} end

-- TF's linear default is Ftrl with learning rate min(0.2, 1/sqrt(features)).
-- drun has no Ftrl; Adagrad with that rate is Ftrl without its L1/L2 terms
-- (both scale each coordinate's step by 1/sqrt(sum of its squared gradients)).
local function linear(what, opts, outputs)
  local n = n_features(what, opts.feature_columns)
  local layers = {nn.Dense{units = outputs, input_shape = {n}, kernel_initializer = 'zeros'}}
  return layers, optim.Adagrad{learning_rate = math.min(0.2, 1 / math.sqrt(n))}
end

function canned.DNNClassifier(opts)
  util.check_keys('DNNClassifier', opts, keys('hidden_units', 'n_classes', 'activation_fn', 'dropout'))
  local classes = n_classes('DNNClassifier', opts.n_classes)
  return estimator(opts, dnn('DNNClassifier', opts, classes), true, dnn_optimizer())
end

function canned.DNNRegressor(opts)
  util.check_keys('DNNRegressor', opts, keys('hidden_units', 'label_dimension', 'activation_fn', 'dropout'))
  local dims = count('DNNRegressor', 'label_dimension', opts.label_dimension or 1)
  return estimator(opts, dnn('DNNRegressor', opts, dims), false, dnn_optimizer())
end

function canned.LinearClassifier(opts)
  util.check_keys('LinearClassifier', opts, keys('n_classes'))
  local layers, default = linear('LinearClassifier', opts, n_classes('LinearClassifier', opts.n_classes))
  return estimator(opts, layers, true, default)
end

function canned.LinearRegressor(opts)
  util.check_keys('LinearRegressor', opts, keys('label_dimension'))
  local dims = count('LinearRegressor', 'label_dimension', opts.label_dimension or 1)
  local layers, default = linear('LinearRegressor', opts, dims)
  return estimator(opts, layers, false, default)
end

return canned
