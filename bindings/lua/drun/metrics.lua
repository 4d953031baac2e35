-- drun.metrics: Keras' metrics by class name, e.g. metrics.AUC{curve = 'PR'},
-- for compile's `metrics` list beside the snake_case names ('accuracy',
-- 'auc', 'precision') that compile takes as they are. The metrics and their
-- options are the C++ registry's (nn/metric_list.hpp), which checks a
-- description where the script makes it.
local core = require 'drun.core'
local util = require 'drun.util'

local metrics = {}
for _, entry in ipairs(core.registry('metrics')) do
  for _, name in ipairs(entry.names) do
    if name:match('^%u') then metrics[name] = util.described('metrics.', name, 'metrics') end
  end
end
return metrics
