-- ResNet-20 learns a label drawn into CIFAR-format images (tests/data/make_cifar10.py
-- --signal): 300 steps of batch 16 on standardised images, then the
-- accuracy on the training images themselves (standardised, not augmented).
-- Prints "train accuracy A after S steps".
local drun = require 'drun'
local resnet = require 'resnet_cifar'
local data, optim = drun.data, drun.optim
local opt = drun.args{steps = 300, batch_size = 16, seed = 1}

local train = data.cifar10{split = 'train'}
local model = resnet{n = 3, seed = opt.seed}
model:compile{
  optimizer = optim.SGD{learning_rate = 0.05, momentum = 0.9, weight_decay = 2e-4},
  loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
  metrics = {'accuracy'},
}
local r = model:fit{
  x = train:augment{standardize = true}
           :shuffle{seed = opt.seed}:repeated(10):batch(opt.batch_size),
  steps = opt.steps,
}
local e = model:evaluate(train:augment{standardize = true}, {batch_size = 250})
print(string.format('train accuracy %.4f after %d steps', e.accuracy, r.global_step))
