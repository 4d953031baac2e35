-- Benchmark: trains a character language model, the LSTM of
-- models/lstm_lm.lua (embedding 64, LSTM 256 returning every step, Dense over
-- the vocabulary) or the transformer of models/transformer_lm.lua (width 128,
-- 4 heads, 2 pre-norm blocks, gelu MLP 512), on windows of 64 tokens from a
-- vocabulary of 96, batch 32 (--batch-size), Adam lr 1e-3, sparse
-- categorical cross-entropy from logits over every step of every example, for
-- a fixed number of steps after a warm-up. Prints one JSON line; its
-- "images_per_sec" is sequences per second (the key tools/bench/cpu.sh reads).
-- The data: random tokens (uniform over the 96), written here to a temporary
-- file that drun.data.text reads whole into memory (vocabulary 'chars': the
-- 96 distinct bytes are ids 0..95), x a window and y the same window one
-- token later; the PyTorch peer, tools/bench/char_lm_torch.py, draws its own.
--   drun --threads 1 tools/bench/char_lm_bench.lua --model lstm --steps 40 --warmup 4
--   drun --threads 1 tools/bench/char_lm_bench.lua --model transformer --steps 40 --warmup 4
local drun = require 'drun'

local opt = drun.args{model = 'lstm', steps = 40, warmup = 4, batch_size = 32, seed = 1,
                     pool = 2560,  -- windows of random tokens to draw batches from
                     precision = 'float32',  -- or mixed_float16, mixed_bfloat16 (a GPU's)
                     cuda_graphs = true}  -- --cuda-graphs=false: a GPU's steps kernel by kernel
if opt.model ~= 'lstm' and opt.model ~= 'transformer' then
  require('drun.util').usage_error("--model: expected 'lstm' or 'transformer', got '" .. opt.model .. "'")
end
local VOCABULARY, STEPS = 96, 64

-- Bytes 32..127, each of them once first so that 'chars' numbers all 96,
-- then uniform ones: pool windows of STEPS plus the last window's next token.
local path = os.tmpname()
do
  math.randomseed(opt.seed)
  local bytes = {}
  for i = 1, VOCABULARY do bytes[i] = 31 + i end
  for i = VOCABULARY + 1, opt.pool * STEPS + 1 do bytes[i] = 31 + math.random(VOCABULARY) end
  local f = assert(io.open(path, 'wb'))
  for i = 1, #bytes, 4096 do f:write(string.char(unpack(bytes, i, math.min(i + 4095, #bytes)))) end
  f:close()
end
local windows = drun.data.text{path = path, sequence_length = STEPS, vocabulary = 'chars'}
os.remove(path)
assert(windows:info().vocabulary_size == VOCABULARY, 'the random text has 96 distinct bytes')

local build = require(opt.model == 'lstm' and 'lstm_lm' or 'transformer_lm')
local model = build{vocabulary = VOCABULARY, steps = STEPS, seed = opt.seed}
model:compile{optimizer = drun.optim.Adam{learning_rate = 1e-3},
              loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
              precision = opt.precision, cuda_graphs = opt.cuda_graphs}

-- Enough passes over the pool for warm-up and timed steps.
local size = windows:size()
local passes = math.ceil(math.max(opt.steps, opt.warmup, 1) * opt.batch_size / size)
local function input(steps)
  return windows:shuffle{seed = opt.seed}:repeated(passes)
    :batch{size = opt.batch_size, drop_remainder = true}:take(steps):prefetch(2)
end

if opt.warmup > 0 then model:fit{x = input(opt.warmup), epochs = 1} end
local r = model:fit{x = input(opt.steps), epochs = 1}

local json_string = require('bench_json').string
local ctx = drun.context()
print(string.format('{"framework": "drun", "model": "%s_lm", "precision": %s, "threads": %d, "batch": %d, "steps": %d, '
                    .. '"images_per_sec": %.1f, "step_ms": %.4f, "final_loss": %.4f, "params": %d, '
                    .. '"graph_steps": %d, "device": %s, "gpu_name": %s}',
                    opt.model, json_string(opt.precision), ctx.threads, opt.batch_size, opt.steps, r.train.images_per_sec,
                    r.train.images_per_sec > 0 and 1000 * opt.batch_size / r.train.images_per_sec or 0,
                    r.train.loss, model:count_params(), r.cuda_graphs and r.cuda_graphs.graph_steps or 0,
                    json_string(ctx.device or 'cpu'), json_string(ctx.gpu_name)))
