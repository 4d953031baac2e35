-- drun.args{epochs = 3, batch_size = 64, ...}: parses the script's arguments
-- (the global `arg`) against these defaults. `--batch-size 64`,
-- `--batch-size=64` and `--batch_size 64` all set batch_size; the default's
-- type gives the value's type (a boolean default makes a flag). `--help`
-- prints the options and exits.
local util = require 'drun.util'

local function usage(defaults, script)
  local names = {}
  for k in pairs(defaults) do names[#names + 1] = k end
  table.sort(names)
  local lines = {'usage: drun ' .. (script or 'script.lua') .. ' [options]', 'options:'}
  for _, k in ipairs(names) do
    local v = defaults[k]
    local flag = '--' .. k:gsub('_', '-')
    if type(v) == 'boolean' then
      lines[#lines + 1] = string.format('  %-22s (flag, default %s)', flag, tostring(v))
    else
      lines[#lines + 1] = string.format('  %-22s (default %s)', flag .. ' ' .. type(v):upper(), tostring(v))
    end
  end
  return table.concat(lines, '\n')
end

return function(defaults, argv)
  argv = argv or arg or {}
  local out = util.copy(defaults)
  local valid = {}
  for k in pairs(defaults) do valid[#valid + 1] = '--' .. k:gsub('_', '-') end
  table.sort(valid)
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == '--help' or a == '-h' then
      print(usage(defaults, argv[0]))
      os.exit(0)
    end
    local name, value = a:match('^%-%-([%w_%-]+)=(.*)$')
    if not name then name = a:match('^%-%-([%w_%-]+)$') end
    if not name then util.fail('unexpected argument "' .. a .. '"; options: ' .. table.concat(valid, ', ')) end
    local key = name:gsub('%-', '_')
    local default = defaults[key]
    if default == nil then
      util.fail('unknown option --' .. name .. '; valid options: ' .. table.concat(valid, ', ') .. ' (and --help)')
    end
    if type(default) == 'boolean' and value == nil then
      out[key] = true
    else
      if value == nil then
        i = i + 1
        value = argv[i]
        if value == nil then util.fail('option --' .. name .. ' needs a value') end
      end
      if type(default) == 'number' then
        local n = tonumber(value)
        if not n then util.fail('option --' .. name .. ' needs a number, got "' .. value .. '"') end
        out[key] = n
      elseif type(default) == 'boolean' then
        out[key] = value == 'true' or value == '1' or value == 'yes'
      else
        out[key] = value
      end
    end
    i = i + 1
  end
  return out
end
