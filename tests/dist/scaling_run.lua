-- For tests/dist/scaling_test.py: a short AllReduce fit of the seed CNN (on
-- Fashion-MNIST) or ResNet-20 (on random 32x32x3 images), whose summary.json
-- has the "scaling" block; --slow-ms makes worker 1 sleep that long in a hook
-- before each step, a straggler the block must name.
local drun = require 'drun'
local args = drun.args{
  model = {'seed_cnn', 'seed_cnn or resnet20'},
  steps = {20, 'training steps'},
  slow_ms = {0, 'worker 1 sleeps this long before each step'},
  model_dir = {'', 'summary.json goes here'},
}

local sleep
do
  local ok, ffi = pcall(require, 'ffi')
  if ok then
    ffi.cdef 'int usleep(unsigned int usec);'
    sleep = function(ms) ffi.C.usleep(ms * 1000) end
  else  -- PUC Lua: wait on the clock
    sleep = function(ms)
      local t = os.clock() + ms / 1000
      while os.clock() < t do end
    end
  end
end

local data, model = drun.data, nil
local train
if args.model == 'resnet20' then
  model = require('resnet_cifar'){depth = 20, seed = 1}
  local xs, ys = {}, {}
  math.randomseed(3)
  for i = 1, 16 * args.steps do
    local img = {}
    for r = 1, 32 do
      local row = {}
      for c = 1, 32 do row[c] = {math.random(), math.random(), math.random()} end
      img[r] = row
    end
    xs[i], ys[i] = img, i % 10
  end
  train = data.arrays{x = xs, y = ys}:batch(8)
else
  model = require('seed_cnn'){seed = 7}
  train = data.fashion_mnist{split = 'train'}:take(64 * args.steps):batch(32)
end

model:compile{optimizer = drun.optim.SGD{learning_rate = 0.01},
              loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true}}
local straggler = {
  before_step = function()
    if args.slow_ms > 0 and drun.context().rank == 1 then sleep(args.slow_ms) end
  end,
}
model:fit{x = train, epochs = 1, strategy = drun.strategy.AllReduce{},
          hooks = {straggler}, model_dir = args.model_dir ~= '' and args.model_dir or nil}
