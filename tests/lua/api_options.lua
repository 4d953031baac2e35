-- What the tests that walk the Lua API share (unknown_keys.lua checks that
-- every table refuses a key it does not know; lua_api_surface.lua lists every
-- option for the reference's drift test): the key no table takes, a copy of
-- options with it added, the options a constructor cannot do without, and a
-- module's constructors.
local M = {}

M.BAD = 'no_such_option'

function M.with_bad(t)
  local c = {}
  for k, v in pairs(t or {}) do c[k] = v end
  c[M.BAD] = 1
  return c
end

-- The options a constructor cannot do without, by name.
M.needs = {
  Dense = {units = 2},
  Conv2D = {filters = 2, kernel_size = 1},
  Activation = {activation = 'relu'},
  PiecewiseConstantDecay = {boundaries = {10}, values = {0.1, 0.01}},
  ExponentialDecay = {initial_learning_rate = 0.1, decay_steps = 10, decay_rate = 0.9},
  CosineDecay = {initial_learning_rate = 0.1, decay_steps = 10},
  LinearWarmup = {warmup_steps = 10, after_warmup_lr_sched = 0.1},
  Dropout = {rate = 0.5},
  ModelCheckpoint = {filepath = 'm.h5'},
  CSVLogger = {filename = 'log.csv'},
  LearningRateScheduler = {schedule = function(_, lr) return lr end},
}

-- drun.data's readers (all its functions), sorted. Each checks its keys
-- before it reads anything, so a bad key is refused without files.
function M.readers(data)
  local names = {}
  for name, value in pairs(data) do
    if type(value) == 'function' then names[#names + 1] = name end
  end
  table.sort(names)
  return names
end

-- What a reader needs besides the refused key (image_folder checks dir first).
M.reader_args = {image_folder = {dir = 'none'}}

-- A module's constructors (its capitalised functions), sorted.
function M.constructors(module)
  local names = {}
  for name, value in pairs(module) do
    if type(name) == 'string' and type(value) == 'function' and name:match('^%u') then
      names[#names + 1] = name
    end
  end
  table.sort(names)
  return names
end

return M
