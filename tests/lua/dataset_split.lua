-- ds:skip, ds:take and ds:split seen from Lua: a model whose output is its
-- input (one Dense unit, kernel ones, no bias) shows which examples a data set
-- holds, by predict. Prints one line per check; errors on the first wrong one.
local drun = require 'drun'
local nn, data = drun.nn, drun.data

local x, y = {}, {}
for i = 1, 20 do x[i], y[i] = {i}, i % 2 end
local ds = data.arrays{x = x, y = y}
local echo = nn.Sequential{nn.Dense{units = 1, use_bias = false, kernel_initializer = 'ones', input_shape = {1}}}

local function ids(d)
  local out = {}
  for i, row in ipairs(echo:predict(d)) do out[i] = math.floor(row[1] + 0.5) end
  return out
end
local function sorted(t)
  local c = {}
  for i, v in ipairs(t) do c[i] = v end
  table.sort(c)
  return c
end
local function expect(what, got, want)
  local g, w = table.concat(got, ','), table.concat(want, ',')
  if g ~= w then error(what .. ': got {' .. g .. '}, expected {' .. w .. '}', 0) end
  print('ok ' .. what)
end

expect('skip(15)', ids(ds:skip(15)), {16, 17, 18, 19, 20})
expect('skip(3):take(2)', ids(ds:skip(3):take(2)), {4, 5})
expect('take(2):skip(3)', ids(ds:take(2):skip(3)), {})
expect('batch(4):skip(4) skips batches', ids(ds:batch(4):skip(4)), {17, 18, 19, 20})

-- Without a seed the split follows the data set's order.
local first, rest = ds:split{fraction = 0.8}
expect('split 0.8 first', ids(first), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
expect('split 0.8 rest', ids(rest), {17, 18, 19, 20})

-- size() counts what take, skip and split keep; batch does not change it.
-- A data set with no ops at all (its empty op list) counts every example.
local sizes = {ds:size(), first:size(), rest:size(), ds:skip(15):size(), ds:take(3):size(), ds:batch(4):size(),
               ds:skip(2):split(0.5):size()}
expect('sizes', sizes, {20, 16, 4, 5, 3, 20, 9})

-- With a seed: 16 and 4 examples, disjoint, together all 20, the same on
-- every call and under a shuffle (which only reorders a part).
local a, b = ds:split{fraction = 0.8, seed = 5}
local got_a, got_b = ids(a), ids(b)
assert(#got_a == 16 and #got_b == 4, 'seeded split sizes ' .. #got_a .. ' and ' .. #got_b)
local all = {}
for _, v in ipairs(got_a) do all[#all + 1] = v end
for _, v in ipairs(got_b) do all[#all + 1] = v end
local every = {}
for i = 1, 20 do every[i] = i end
expect('seeded split covers the data once', sorted(all), every)
expect('seeded split is deterministic', ids(select(2, ds:split{fraction = 0.8, seed = 5})), got_b)
expect('shuffle keeps the part', sorted(ids(a:shuffle(3))), sorted(got_a))
if table.concat(got_a, ',') == table.concat(every, ',', 1, 16) then error('seeded split kept the order', 0) end
print('ok seeded split draws')

-- A part's examples can be split again.
local train, val = a:split(0.75)
expect('split of a part', sorted(ids(train)) , sorted({unpack(got_a, 1, 12)}))
assert(#ids(val) == 4)
print('ok split of a part: 12 and 4')

-- Errors name the op and what was wrong (the pipeline is checked when read).
local ok, err = pcall(function() return ids(ds:split{fraction = 1.5}) end)
assert(not ok and err:find('split fraction must be between 0 and 1', 1, true), tostring(err))
ok, err = pcall(function() return ds:split{fraction = 0.5, sede = 1} end)
assert(not ok and err:find("split: unknown option 'sede'", 1, true), tostring(err))
ok, err = pcall(function() return ids(ds:batch(4):split(0.5)) end)
assert(not ok and err:find('call it before batch', 1, true), tostring(err))
print('ok errors')
