-- The seed CNN trained one epoch on the first --limit Fashion-MNIST training
-- images twice, from the idx files and from an HDF5 copy (--h5, datasets
-- x_train and y_train), same seed and shuffle: prints both final losses
-- with every digit, which agree exactly when the two readers give the same
-- examples in the same order.
local drun = require 'drun'
local seed_cnn = require 'seed_cnn'

local opt = drun.args{h5 = '', limit = 2000, dir = ''}
local function loss_after_one_epoch(ds, name)
  local model = seed_cnn{seed = 3}
  model:compile{optimizer = drun.optim.Adam{learning_rate = 1e-3},
                loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true}}
  local input = ds:take(opt.limit):scale(1 / 255):shuffle{seed = 7}:batch(64)
  return model:fit{x = input, epochs = 1, model_dir = opt.dir .. '/' .. name}.train.loss
end
local from_idx = loss_after_one_epoch(drun.data.fashion_mnist{split = 'train', scale = false}, 'idx')
local from_h5 = loss_after_one_epoch(drun.data.hdf5{path = opt.h5, x = 'x_train', y = 'y_train'}, 'hdf5')
print(string.format('idx %.9g hdf5 %.9g', from_idx, from_h5))
