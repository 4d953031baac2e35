-- Small helpers shared by drun's Lua modules.
local core = require 'drun.core'

local util = {}

-- Raises an error located at the user's script (not at this module).
util.fail = core.fail

-- A usage error: a bad command-line option, not a fault in the script. drun
-- prints it as one line, without a traceback, and exits 2.
function util.usage_error(message)
  error({usage = message}, 0)
end

-- Makes a name that module table `t` lacks a usage error that names it and a
-- near miss ("drun.nn has no 'Dens' (did you mean 'Dense'?)"), at the
-- script's line, instead of a nil that fails later as "attempt to call a nil
-- value" with a traceback. rawget(t, name) still asks whether it is there.
function util.strict(t, what)
  return setmetatable(t, {__index = function(_, k)
    local names = {}
    for n in pairs(t) do
      if type(n) == 'string' then names[#names + 1] = n end
    end
    util.fail(what .. " has no '" .. tostring(k) .. "'" .. core.did_you_mean(tostring(k), names))
  end})
end

function util.copy(t)
  local c = {}
  for k, v in pairs(t or {}) do c[k] = v end
  return c
end

-- Checks that `opts` is a table and has no keys outside `valid`.
function util.check_keys(what, opts, valid)
  if type(opts) ~= 'table' then util.fail(what .. ' expects a table of options, got ' .. type(opts)) end
  local allowed = {}
  for _, k in ipairs(valid) do allowed[k] = true end
  for k in pairs(opts) do
    if not allowed[k] then
      table.sort(valid)
      util.fail(what .. ": unknown option '" .. tostring(k) .. "'" .. core.did_you_mean(tostring(k), valid) ..
                "; valid options: " .. table.concat(valid, ', '))
    end
  end
end

-- A copy of `opts` (nil: none) checked against the entry `name` of the C++
-- registry `kind` (core.check), so that a mistake is reported at the script's
-- line; `what` names the constructor in the error for a value that is no table.
function util.checked(kind, name, opts, what)
  if opts ~= nil and type(opts) ~= 'table' then
    util.fail((what or name) .. ' expects a table of options, got ' .. type(opts))
  end
  local c = util.copy(opts)
  core.check(kind, name, c)
  return c
end

-- A constructor of Keras-style descriptions {class_name, config}. With `kind`
-- the options are checked at once against that C++ registry (util.checked);
-- else in C++, where the description is used.
function util.described(prefix, class_name, kind)
  return function(config)
    if kind then return {class_name = class_name, config = util.checked(kind, class_name, config, prefix .. class_name)} end
    if config ~= nil and type(config) ~= 'table' then
      util.fail(prefix .. class_name .. ' expects a table of options, got ' .. type(config))
    end
    return {class_name = class_name, config = util.copy(config)}
  end
end

return util
