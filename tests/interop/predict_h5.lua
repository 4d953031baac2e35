-- Predicts with a Keras HDF5 model file: drun.load_model(--model),
-- the inputs from --inputs (JSON: a nested list of examples, or an object whose
-- "inputs" member is one, as tests/interop/keras_models.py writes), the
-- predictions as JSON rows to --output (or to stdout after "PREDICTIONS ");
-- with --save PATH, the loaded model is saved again there (model:save).
--   drun -q tests/interop/predict_h5.lua --model m.h5 --inputs x.json --output y.json
local drun = require 'drun'
local opt = drun.args{model = '', inputs = '', output = '', save = '', batch_size = 32}
assert(opt.model ~= '' and opt.inputs ~= '', 'pass --model FILE.h5 --inputs FILE.json')

local function read(path)
  local f = assert(io.open(path, 'rb'))
  local s = f:read('*a')
  f:close()
  return s
end

-- Lua has no JSON reader, and only nested lists of numbers are needed here:
-- a list is '[' values separated by ',' ']'.
local function parse_number_lists(text)
  local stack, current, result = {}, nil, nil
  for token in text:gsub('[%[%],]', ' %0 '):gmatch('%S+') do
    if token == '[' then
      local list = {}
      if current then current[#current + 1] = list end
      stack[#stack + 1] = current
      current = list
      result = result or list
    elseif token == ']' then
      current = table.remove(stack)
    elseif token ~= ',' then
      local n = tonumber(token)
      if n == nil or current == nil then error('inputs: unexpected "' .. token .. '"') end
      current[#current + 1] = n
    end
  end
  if result == nil or current ~= nil then error('inputs: not a complete JSON list') end
  return result
end

local text = read(opt.inputs)
if text:match('^%s*{') then
  text = text:match('"inputs"%s*:%s*(%b[])') or error(opt.inputs .. ': no "inputs" list')
end
local x = parse_number_lists(text)
local y = {}
for i = 1, #x do y[i] = 0 end

local model = drun.load_model(opt.model)
local rows = model:predict(drun.data.arrays{x = x, y = y}:batch(opt.batch_size))
if opt.save ~= '' then model:save(opt.save) end

-- %.9g prints a float32 so that it reads back as the same float32.
local function number(v)
  if v ~= v then return 'NaN' end
  if v == math.huge then return 'Infinity' end
  if v == -math.huge then return '-Infinity' end
  return string.format('%.9g', v)
end
local out = {}
for i, row in ipairs(rows) do
  local cells = {}
  for j, v in ipairs(row) do cells[j] = number(v) end
  out[i] = '[' .. table.concat(cells, ', ') .. ']'
end
local json = '[' .. table.concat(out, ',\n ') .. ']\n'
if opt.output ~= '' then
  local f = assert(io.open(opt.output, 'w'))
  f:write(json)
  f:close()
else
  io.write('PREDICTIONS ', json)
end
