-- drun.core called with a wrong argument: the binding's throwing helpers
-- report it through the one error path, located at this file's line.
local core = require 'drun.core'
local which = arg[1] or 'seed'
if which == 'seed' then
  core.model({name = 'sequential', layers = {}}, 'not a number')
elseif which == 'object' then
  core.trainer({}, {loss = 'mse'})
elseif which == 'hooks' then
  local model = core.model({name = 'sequential', layers = {
    {class_name = 'Dense', config = {units = 2, input_shape = {3}}}}}, 0)
  local t = core.trainer(model, {loss = 'mse'})
  local ds = core.open_dataset('arrays', {x = {{1, 2, 3}, {4, 5, 6}}, y = {{1, 0}, {0, 1}}})
  local hook = setmetatable({}, {__index = function() error('no such field here') end})
  t:fit(ds, {{op = 'batch', size = 1}}, nil, nil, {epochs = 1}, {hook})
elseif which == 'cycle' then  -- a table that holds itself: refused, not followed forever
  local layer = {class_name = 'Dense', config = {units = 2, input_shape = {3}}}
  layer.config.again = layer
  core.model({name = 'sequential', layers = {layer}}, 0)
elseif which == 'utf8' then  -- JSON is UTF-8: named where it comes in, not at a later dump
  core.model({name = 'seq\255uential', layers = {}}, 0)
elseif which == 'nan_key' then  -- a number key of any value is a key, not undefined behaviour
  core.model({name = 'sequential', layers = {
    {class_name = 'Dense', config = {units = 2, input_shape = {3}, [1e300] = 1}}}}, 0)
end
