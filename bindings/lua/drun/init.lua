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

-- This rank's place in the job: worker 0 is the chief; one process without
-- MPI is the chief of a one-worker cluster.
function drun.cluster()
  local c = core.context()
  local role = c.rank == 0 and 'chief' or 'worker'
  return {role = role, index = c.rank, workers = c.workers, ps = 0, host = c.host}
end

function drun.is_chief() return drun.cluster().role == 'chief' end

function drun.context() return core.context() end

return drun
