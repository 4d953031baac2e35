-- drun.data.text on a text file given on the command line: prints its size,
-- shape and vocabulary and checks each window's ids against the file read
-- here (an echo model, one Dense unit of ones, sums a window's ids), under
-- shuffle, batch and shard, and the held-out tail. With --model-dir, fits a
-- bigram model (sequence_length 1: one Dense layer of logits) whose summary
-- reports bits per character. Errors on the first wrong check.
local drun = require 'drun'
local nn = drun.nn

local opt = drun.args{path = '', sequence_length = 4, model_dir = ''}
local T = opt.sequence_length
local ds = drun.data.text{path = opt.path, sequence_length = T, vocabulary = 'chars'}
local info = ds:info()
print(string.format('examples %d shape %s vocabulary %d', ds:size(), table.concat(ds:shape(), 'x'),
                    info.vocabulary_size))

local function expect(what, got, want)
  local g, w = table.concat(got, ','), table.concat(want, ',')
  if g ~= w then error(what .. ': got {' .. g .. '}, expected {' .. w .. '}', 0) end
  print('ok ' .. what)
end
local function sorted(t)
  local c = {}
  for i, v in ipairs(t) do c[i] = v end
  table.sort(c)
  return c
end

local f = assert(io.open(opt.path, 'rb'))
local text = f:read('*a')
f:close()
local id = {}
for i = 1, #info.vocabulary do id[info.vocabulary:byte(i)] = i - 1 end
assert(info.vocabulary_size == #info.vocabulary, 'vocabulary_size ' .. info.vocabulary_size)

local echo = nn.Sequential{nn.Dense{units = 1, use_bias = false, kernel_initializer = 'ones',
                                    input_shape = {T}}}
local function sums(d)
  local out = {}
  for i, row in ipairs(echo:predict(d)) do out[i] = math.floor(row[1] + 0.5) end
  return out
end
-- The sum of the ids of the window that starts at byte `start` (0-based).
local function window_sum(start)
  local s = 0
  for t = 1, T do s = s + id[text:byte(start + t)] end
  return s
end
local want = {}
for e = 0, ds:size() - 1 do want[e + 1] = window_sum(e * T) end
expect('window ids', sums(ds), want)
expect('shuffled batches', sorted(sums(ds:shuffle{seed = 3}:batch(4))), sorted(want))
local both = sums(ds:shard(2, 0))
for _, v in ipairs(sums(ds:shard(2, 1))) do both[#both + 1] = v end
expect('two shards', sorted(both), sorted(want))

-- The last quarter of the bytes is the validation subset, with the same ids.
local options = {path = opt.path, sequence_length = T, vocabulary = 'chars', validation_split = 0.25}
options.subset = 'training'
local train = drun.data.text(options)
options.subset = 'validation'
local val = drun.data.text(options)
local cut = #text - math.floor(0.25 * #text + 0.5)
expect('training bytes', {train:info().bytes, val:info().bytes}, {cut, #text - cut})
expect('validation windows', sums(val:take(1)), {window_sum(cut)})
expect('shared vocabulary', {val:info().vocabulary}, {info.vocabulary})

local ok, err = pcall(drun.data.text, {path = opt.path, sequence_length = T, subset = 'validation'})
assert(not ok and err:find('subset needs a validation_split', 1, true), tostring(err))
ok, err = pcall(drun.data.text, {path = opt.path, sequence_lenght = T})
assert(not ok and err:find("unknown option 'sequence_lenght'", 1, true), tostring(err))
print('ok errors')

if opt.model_dir ~= '' then
  options.sequence_length, options.subset = 1, 'training'
  local bigrams = drun.data.text(options)
  options.subset = 'validation'
  local held_out = drun.data.text(options)
  local V = bigrams:info().vocabulary_size
  local model = nn.Sequential{nn.Dense{units = V, input_shape = {1}}, seed = 1}
  model:compile{optimizer = drun.optim.Adam{learning_rate = 0.05},
                loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
                metrics = {'accuracy'}}
  local r = model:fit{x = bigrams:shuffle(1):batch(16), epochs = 2,
                      validation_data = held_out:batch(16), model_dir = opt.model_dir}
  print(string.format('bits_per_char %.6f loss %.6f', r.eval.bits_per_char, r.eval.loss))
end
