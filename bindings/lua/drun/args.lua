-- drun.args{epochs = 3, lr = {0.01, 'learning rate of SGD'}, ...}: parses the
-- script's arguments (the global `arg`) against these defaults, each a value
-- or {value, 'description'}. `--batch-size 64`, `--batch-size=64` and
-- `--batch_size 64` all set batch_size; the default's type gives the value's
-- type (a boolean default makes a flag: `--name` or `--name=false`). `--help`
-- prints the options with their descriptions and exits. A bad option is a
-- usage error: one line, exit code 2.
local core = require 'drun.core'
local util = require 'drun.util'

-- {name = value or {value, description}} -> {name = value}, {name = description}
local function split(spec)
  local defaults, descriptions = {}, {}
  for k, v in pairs(spec) do
    if type(v) == 'table' then
      if v[1] == nil or (v[2] ~= nil and type(v[2]) ~= 'string') then
        util.fail('drun.args: option ' .. k .. ' must be a value or {value, "description"}')
      end
      defaults[k], descriptions[k] = v[1], v[2]
    else
      defaults[k] = v
    end
  end
  return defaults, descriptions
end

local function flag_name(key) return '--' .. key:gsub('_', '-') end

local function default_text(v, flag)
  if type(v) == 'boolean' then
    return v and '(on by default; ' .. flag .. '=false turns it off)' or '(off by default)'
  end
  if v == '' then return '(default: none)' end
  return '(default ' .. tostring(v) .. ')'
end

local function usage(defaults, descriptions, script)
  local names = {}
  for k in pairs(defaults) do names[#names + 1] = k end
  table.sort(names)
  local lines = {'usage: drun ' .. (script or 'script.lua') .. ' [options]', '', 'options:'}
  for _, k in ipairs(names) do
    local v = defaults[k]
    local flag = flag_name(k)
    local shown = type(v) == 'boolean' and flag or flag .. (type(v) == 'number' and ' N' or ' TEXT')
    local text = descriptions[k] or ''
    -- A description may say the default itself, where the value alone would mislead ('').
    if not text:find('(default', 1, true) then
      text = (text ~= '' and text .. ' ' or '') .. default_text(v, flag)
    end
    lines[#lines + 1] = string.format('  %-32s %s', shown, text)
  end
  lines[#lines + 1] = string.format('  %-32s %s', '-h, --help', 'print this help and exit')
  return table.concat(lines, '\n')
end

local booleans = {['true'] = true, ['1'] = true, yes = true, on = true,
                  ['false'] = false, ['0'] = false, no = false, off = false}

return function(spec, argv)
  argv = argv or arg or {}
  local defaults, descriptions = split(spec)
  local script = argv[0] or 'script.lua'
  local function bad(message) util.usage_error(script .. ': ' .. message) end
  local out = util.copy(defaults)
  local valid = {}
  for k in pairs(defaults) do valid[#valid + 1] = flag_name(k) end
  table.sort(valid)
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == '--help' or a == '-h' then
      print(usage(defaults, descriptions, argv[0]))
      os.exit(0)
    end
    local name, value = a:match('^%-%-([%w_%-]+)=(.*)$')
    if not name then name = a:match('^%-%-([%w_%-]+)$') end
    if not name then bad('unexpected argument "' .. a .. '"; options: ' .. table.concat(valid, ', ')) end
    local key = name:gsub('%-', '_')
    local default = defaults[key]
    if default == nil then
      bad('unknown option --' .. name .. core.did_you_mean('--' .. name, valid) .. '; valid options: ' ..
          table.concat(valid, ', ') .. ' (and --help)')
    end
    if type(default) == 'boolean' then
      if value == nil then
        out[key] = true
      elseif booleans[value:lower()] == nil then
        bad('option --' .. name .. ' is a flag: --' .. name .. ' or --' .. name .. '=false, got "' .. value .. '"')
      else
        out[key] = booleans[value:lower()]
      end
    else
      if value == nil then
        i = i + 1
        value = argv[i]
        if value == nil then bad('option --' .. name .. ' needs a value') end
      end
      if type(default) == 'number' then
        local n = tonumber(value)
        if not n then bad('option --' .. name .. ' needs a number, got "' .. value .. '"') end
        out[key] = n
      else
        out[key] = value
      end
    end
    i = i + 1
  end
  return out
end
