-- drun.mixed_precision: Keras' global dtype policy. 'float32' (the default)
-- trains in float32; 'mixed_float16' and 'mixed_bfloat16' run the GEMMs and
-- convolutions on float16 or bfloat16 copies of their operands (float32
-- variables, optimizer state, losses and batch norm), on a GPU only; with
-- 'mixed_float16' compile wraps the optimizer in a LossScaleOptimizer unless
-- it is one. model:compile{precision = ...} overrides it for one model.
local util = require 'drun.util'

local M = {}
local policies = {float32 = true, mixed_float16 = true, mixed_bfloat16 = true}
local current = 'float32'

function M.set_global_policy(name)
  if not policies[name] then
    util.fail("drun.mixed_precision.set_global_policy: unknown policy '" .. tostring(name) ..
              "'; valid: float32, mixed_bfloat16, mixed_float16")
  end
  current = name
end

function M.global_policy() return current end

return M
