-- drun.data: data sets and their pipelines. A data set is an in-memory C++
-- data set plus a list of pipeline ops (shuffle, batch, take, ...); each op
-- returns a new data set, as tf.data does, and the C++ pipeline runs them.
local core = require 'drun.core'
local util = require 'drun.util'

local data = {}

local Dataset = {}
Dataset.__index = Dataset

-- In plan mode data sets are not read: a stand-in answers for them.
local planned = {size = function() return 0 end, shape = function() return {} end}

local function wrap(handle, ops)
  return setmetatable({_core = handle, _ops = ops or {}}, Dataset)
end

local function plan() return core.context().plan end

local function with_op(self, op)
  local ops = {}
  for i, o in ipairs(self._ops) do ops[i] = o end
  ops[#ops + 1] = op
  return wrap(self._core, ops)
end

-- Number of examples (those that take, skip and split before batch keep) and
-- the shape of one example.
function Dataset:size() return self._core:size(self._ops) end
function Dataset:shape() return self._core:shape() end

function Dataset:is_batched()
  for _, o in ipairs(self._ops) do if o.op == 'batch' then return true end end
  return false
end

-- ds:shuffle{seed = 42} or ds:shuffle(42): a new order every epoch from the
-- seed. buffer_size: the shuffle buffer of a streamed data set (in memory the
-- whole set is shuffled).
function Dataset:shuffle(opts)
  if type(opts) == 'number' then opts = {seed = opts} end
  opts = opts or {}
  util.check_keys('shuffle', opts, {'seed', 'buffer_size'})
  return with_op(self, {op = 'shuffle', seed = opts.seed or 0, buffer_size = opts.buffer_size})
end

-- ds:batch(64) or ds:batch{size = 64, drop_remainder = true}
function Dataset:batch(opts)
  if type(opts) == 'number' then opts = {size = opts} end
  util.check_keys('batch', opts or {}, {'size', 'batch_size', 'drop_remainder'})
  return with_op(self, {op = 'batch', size = opts.size or opts.batch_size, drop_remainder = opts.drop_remainder})
end

-- Before batch: the first n examples; after batch: the first n batches of
-- each epoch. Takes, skips and splits apply in the order given.
function Dataset:take(n) return with_op(self, {op = 'take', n = n}) end
-- Before batch: all but the first n examples; after batch: all but the first n batches.
function Dataset:skip(n) return with_op(self, {op = 'skip', n = n}) end

-- ds:split{fraction = 0.8, seed = 1} -> first, rest: two data sets holding
-- round(0.8 * n) and the other examples. The parts are fixed before any
-- shuffle; seed draws which examples go where (without it: the data set's
-- order, first examples first).
function Dataset:split(opts)
  if type(opts) == 'number' then opts = {fraction = opts} end
  opts = opts or {}
  util.check_keys('split', opts, {'fraction', 'seed'})
  local function part(first)
    return with_op(self, {op = 'split', fraction = opts.fraction, seed = opts.seed, first = first})
  end
  return part(true), part(false)
end

-- `repeat` is a Lua keyword: call it as ds:repeated(n) or ds['repeat'](ds, n).
function Dataset:repeated(n) return with_op(self, {op = 'repeat', count = n}) end
Dataset['repeat'] = Dataset.repeated

-- x * scale + offset while batching, e.g. ds:scale(1 / 255).
function Dataset:scale(factor) return with_op(self, {op = 'scale', factor = factor}) end
function Dataset:map(opts)
  util.check_keys('map', opts or {}, {'scale', 'offset'})
  return with_op(self, {op = 'map', scale = opts.scale, offset = opts.offset})
end

-- ds:augment{crop_padding = 4, flip = true, standardize = true, seed = 1}:
-- pad-and-crop, left-right flips and per-image standardisation of (H, W, C)
-- images, seeded per (epoch, example) so that a resumed run repeats them.
function Dataset:augment(opts)
  opts = opts or {}
  util.check_keys('augment', opts, {'crop_padding', 'flip', 'standardize', 'seed'})
  return with_op(self, {op = 'augment', crop_padding = opts.crop_padding, flip = opts.flip,
                        standardize = opts.standardize, seed = opts.seed})
end

function Dataset:prefetch(depth) return with_op(self, {op = 'prefetch', depth = depth}) end
function Dataset:shard(count, index) return with_op(self, {op = 'shard', count = count, index = index}) end

-- drun.data.fashion_mnist{split = 'train' | 'test', dir = nil, scale = true}:
-- Debian's dataset-fashion-mnist, pixels scaled to [0, 1] unless scale = false.
function data.fashion_mnist(opts)
  opts = opts or {}
  util.check_keys('data.fashion_mnist', opts, {'split', 'dir', 'scale'})
  local ds = wrap(plan() and planned or core.fashion_mnist(opts.split or 'train', opts.dir))
  if opts.scale ~= false then ds = ds:scale(1 / 255) end
  return ds
end

-- drun.data.idx{images = 'train-images-idx3-ubyte.gz', labels = 'train-labels-idx1-ubyte.gz'}:
-- any pair of idx files (gzipped or raw), as MNIST's; images (N, H, W) or
-- (N, H, W, C) with their raw values (ds:scale(1 / 255) for bytes), labels
-- class ids.
function data.idx(opts)
  util.check_keys('data.idx', opts or {}, {'images', 'labels'})
  if type(opts.images) ~= 'string' or type(opts.labels) ~= 'string' then
    util.fail('data.idx needs images = "file" and labels = "file"')
  end
  return wrap(plan() and planned or core.idx(opts.images, opts.labels))
end

-- drun.data.numpy{x = 'x.npy', y = 'y.npy'}, or members of one .npz file:
-- drun.data.numpy{path = 'mnist.npz', x = 'x_train', y = 'y_train'}. Values
-- as stored (ds:scale(1 / 255) for bytes); integer y are class ids.
function data.numpy(opts)
  util.check_keys('data.numpy', opts or {}, {'path', 'x', 'y'})
  if type(opts.x) ~= 'string' or type(opts.y) ~= 'string' then
    util.fail('data.numpy needs x and y: .npy files, or member names with path = "file.npz"')
  end
  if opts.path ~= nil and type(opts.path) ~= 'string' then util.fail('data.numpy: path must be a string') end
  return wrap(plan() and planned or core.numpy(opts.path, opts.x, opts.y))
end

-- drun.data.hdf5{path = 'train.h5', x = 'images', y = 'labels', stream = nil}:
-- two datasets of an HDF5 file (h5py's) or of a list of files, one after the
-- other; values as stored (ds:scale(1 / 255) for bytes); integer y are class
-- ids. x is read whole into memory, or streamed from the files in blocks of
-- chunks while training: stream = true or false, by default when x would
-- take more than 1 GiB of memory.
function data.hdf5(opts)
  util.check_keys('data.hdf5', opts or {}, {'path', 'x', 'y', 'stream'})
  local paths = opts.path
  if type(paths) == 'string' then paths = {paths} end
  local ok = type(paths) == 'table' and #paths > 0
  for _, p in ipairs(ok and paths or {}) do ok = ok and type(p) == 'string' end
  if not ok or type(opts.x) ~= 'string' or type(opts.y) ~= 'string' then
    util.fail('data.hdf5 needs path = "file.h5" (or a list of files), x = "dataset" and y = "dataset"')
  end
  if opts.stream ~= nil and type(opts.stream) ~= 'boolean' then
    util.fail('data.hdf5: stream must be true or false (leave it out to stream files above 1 GiB)')
  end
  return wrap(plan() and planned or core.hdf5(paths, opts.x, opts.y, opts.stream))
end

-- drun.data.cifar10{split = 'train' | 'test', dir = nil, shard = false}: the
-- binary version's files from dir, --data-dir or DRUN_DATA_DIR; pixels 0..255
-- (NHWC). shard = true in a multi-worker job loads only this worker's part
-- into memory (the training input is then not sharded again).
function data.cifar10(opts)
  opts = opts or {}
  util.check_keys('data.cifar10', opts, {'split', 'dir', 'shard'})
  return wrap(plan() and planned or core.cifar10(opts.split or 'train', opts.dir, opts.shard))
end

-- drun.data.csv{path = 'iris.csv', label = 'species', label_type = 'int', header = 'auto'}
function data.csv(opts)
  util.check_keys('data.csv', opts or {}, {'path', 'label', 'label_type', 'header', 'delimiter'})
  if type(opts.path) ~= 'string' then util.fail('data.csv needs path = "file.csv"') end
  return wrap(plan() and planned or core.csv(opts.path, opts))
end

-- drun.data.image_folder{dir = 'train', size = {224, 224}, augment = true}:
-- dir/<class>/<image>.jpg|png, labels the indices of the sorted class names;
-- images decoded per batch on `threads` threads, random-resized-crop and flip
-- with augment, else resize and centre crop; pixels scaled to [0, 1] unless
-- scale = false (then 0..255).
function data.image_folder(opts)
  opts = opts or {}
  util.check_keys('data.image_folder', opts, {'dir', 'size', 'augment', 'flip', 'crop_scale',
                                              'crop_ratio', 'crop_fraction', 'threads', 'seed',
                                              'scale'})
  if type(opts.dir) ~= 'string' then util.fail('data.image_folder needs dir = "path/to/images"') end
  local ds = wrap(plan() and planned or core.image_folder(opts))
  if opts.scale ~= false then ds = ds:scale(1 / 255) end
  return ds
end

-- drun.data.arrays{x = {{...}, ...}, y = {...}}: small data sets from Lua tables.
function data.arrays(opts)
  util.check_keys('data.arrays', opts or {}, {'x', 'y'})
  return wrap(plan() and planned or core.arrays(opts.x, opts.y))
end

return data
