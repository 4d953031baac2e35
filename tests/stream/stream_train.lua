-- Trains a small network for --steps batches (over at most --epochs epochs)
-- on a streamed HDF5 file (--h5, datasets x and y) into --dir: the block
-- order and the shuffle buffer spread the reading over the whole file.
-- Prints the training accuracy; summary.json in --dir has the peak memory.
-- --stream true forces streaming (data.hdf5 streams files above 1 GiB by
-- itself); --ckpt N checkpoints every N steps, and a rerun resumes.
local drun = require 'drun'
local nn = drun.nn

local opt = drun.args{h5 = '', dir = '', steps = 300, epochs = 1, ckpt = 0, buffer = 10000,
                      stream = ''}
local stream = nil
if opt.stream ~= '' then stream = opt.stream == 'true' end
local ds = drun.data.hdf5{path = opt.h5, x = 'x', y = 'y', stream = stream}
local input = ds:shuffle{seed = 1, buffer_size = opt.buffer}:scale(1 / 255):batch(64):prefetch(2)
local model = nn.Sequential{nn.Flatten{input_shape = ds:shape()}, nn.Dense{units = 10}}
model:compile{optimizer = drun.optim.Adam{learning_rate = 1e-2},
              loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
              metrics = {'accuracy'}}
local result = model:fit{x = input, epochs = opt.epochs, steps = opt.steps, model_dir = opt.dir,
                         save_checkpoints_steps = opt.ckpt}
print(string.format('examples %d accuracy %.4f', ds:size(), result.train.accuracy))
