-- drun: the module an experiment script requires. It gathers the parts
-- (nn, data, optim, losses, Estimator, Experiment, args) into one table; the
-- work is done in C++ through drun.core.
local core = require 'drun.core'

local drun = {
  core = core,
  nn = require 'drun.nn',
  data = require 'drun.data',
  optim = require 'drun.optim',
  losses = require 'drun.losses',
  strategy = require 'drun.strategy',
  args = require 'drun.args',
}

local estimator = require 'drun.estimator'
drun.Estimator = estimator.Estimator
drun.Experiment = estimator.Experiment

-- One process without MPI is the chief of a one-worker cluster.
function drun.cluster()
  return {role = 'chief', index = 0, workers = 1, ps = 0,
          tf_config = {cluster = {chief = {'localhost:0'}}, task = {type = 'chief', index = 0}}}
end

function drun.is_chief() return drun.cluster().role == 'chief' end

function drun.context() return core.context() end

return drun
