-- A misspelt canned-estimator option: the error names it, lists the valid
-- ones and points at this file's line.
local drun = require 'drun'
local estimator = drun.DNNRegressor{
  hiden_units = {3, 3},
  feature_columns = 3,
}
