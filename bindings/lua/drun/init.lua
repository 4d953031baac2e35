-- drun: the module an experiment script requires. It gathers the parts
-- (nn, data, optim, losses, metrics, Estimator, Experiment, args) into one table; the
-- work is done in C++ through drun.core.
local core = require 'drun.core'
local util = require 'drun.util'

local drun = {
  core = core,
  nn = require 'drun.nn',
  data = require 'drun.data',
  optim = require 'drun.optim',
  losses = require 'drun.losses',
  metrics = require 'drun.metrics',
  strategy = require 'drun.strategy',
  args = require 'drun.args',
  mixed_precision = require 'drun.mixed_precision',
}

local estimator = require 'drun.estimator'
drun.Estimator = estimator.Estimator
drun.Experiment = estimator.Experiment
drun.RunConfig = estimator.RunConfig
drun.load_model = require('drun.model').load
drun.hooks = require 'drun.hooks'
drun.callbacks = require 'drun.callbacks'
local canned = require 'drun.canned'
drun.DNNClassifier = canned.DNNClassifier
drun.DNNRegressor = canned.DNNRegressor
drun.LinearClassifier = canned.LinearClassifier
drun.LinearRegressor = canned.LinearRegressor

-- This rank's place in the job: worker 0 is the chief; one process without
-- MPI is the chief of a one-worker cluster.
-- role and task_index follow TF_CONFIG (the chief is task 0 of "chief",
-- the other workers are "worker" 0..W-2); index is the worker's rank.
function drun.cluster()
  local c = core.context()
  return {role = c.role, task_index = c.task_index, index = c.rank, workers = c.workers,
          host = c.host, tf_config = c.tf_config}
end

function drun.is_chief() return core.context().role == 'chief' end

function drun.context() return core.context() end

return util.strict(drun, 'drun')
