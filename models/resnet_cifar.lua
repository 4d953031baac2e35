-- ResNet-(6n+2) for CIFAR-10 (He et al. 2015, "Deep Residual Learning for
-- Image Recognition", section 4.2), built with the functional API:
--   3x3 conv 16 - BN - ReLU,
--   three stages of n basic blocks with 16, 32 and 64 filters (the first block
--   of stages 2 and 3 has stride 2), each block
--     conv3x3 - BN - ReLU - conv3x3 - BN, + shortcut, ReLU,
--   global average pooling, Dense(classes) logits.
-- Shortcuts are the identity where the shapes match; where they do not
-- (stages 2 and 3, first block) option B, a projection: 1x1 conv stride 2 + BN.
-- Option A (identity with zero-padded channels, the paper's CIFAR choice)
-- needs a strided-slice/channel-pad layer that neither drun nor Keras has, so
-- shortcut = 'A' fails with a message saying so.
--
-- Convolutions have no bias (BN follows each) and he_normal kernels; the dense
-- layer is he_normal too (as the common PyTorch CIFAR ResNets initialise it).
-- Batch normalisation uses PyTorch's defaults (momentum 0.1 in PyTorch's
-- convention = 0.9 in Keras', epsilon 1e-5), as the PyTorch peer does.
--
--   ResNet-20: n = 3, 274,042 parameters (272,474 trainable; the paper's 0.27M)
--   ResNet-32: n = 5, 469,370 parameters (466,906 trainable; 0.46M)
--   ResNet-56: n = 9, 860,026 parameters (855,770 trainable; 0.85M)
-- (non-trainable: the batch-norm moving means and variances)
--
--   local resnet = require 'resnet_cifar'
--   local model = resnet{n = 9, seed = 1}          -- ResNet-56
--   local model = resnet{depth = 20}               -- the same as n = 3
local nn = require('drun').nn
local util = require 'drun.util'

local valid = {'n', 'depth', 'shortcut', 'classes', 'input_shape', 'seed', 'name',
               'bn_momentum', 'bn_epsilon'}

return function(opts)
  opts = opts or {}
  util.check_keys('resnet_cifar', opts, valid)
  local n = opts.n
  if opts.depth ~= nil then
    if type(opts.depth) ~= 'number' or opts.depth < 8 or (opts.depth - 2) % 6 ~= 0 then
      util.fail('resnet_cifar: depth must be 6n + 2 (20, 32, 44, 56, 110, ...), got ' .. tostring(opts.depth))
    end
    if n ~= nil and n ~= (opts.depth - 2) / 6 then
      util.fail('resnet_cifar: depth ' .. opts.depth .. ' and n ' .. tostring(n) .. ' disagree; give one')
    end
    n = (opts.depth - 2) / 6
  end
  n = n or 3
  if type(n) ~= 'number' or n < 1 or n % 1 ~= 0 then
    util.fail('resnet_cifar: n (blocks per stage) must be a positive integer, got ' .. tostring(n))
  end
  local shortcut = opts.shortcut or 'B'
  if shortcut == 'A' then
    util.fail("resnet_cifar: shortcut option 'A' (identity with zero-padded channels after a "
              .. "stride-2 subsampling) needs a strided-slice / channel-padding layer, which drun "
              .. "(like Keras) does not have; use shortcut = 'B' (1x1 convolution projection)")
  elseif shortcut ~= 'B' then
    util.fail("resnet_cifar: shortcut must be 'B' (projection where shapes change), got " .. tostring(shortcut))
  end
  local classes = opts.classes or 10
  local bn_momentum = opts.bn_momentum or 0.9
  local bn_epsilon = opts.bn_epsilon or 1e-5

  local function conv(filters, kernel_size, strides)
    return nn.Conv2D{filters = filters, kernel_size = kernel_size, strides = strides or 1,
                     padding = 'same', use_bias = false, kernel_initializer = 'he_normal'}
  end
  local function bn() return nn.BatchNormalization{momentum = bn_momentum, epsilon = bn_epsilon} end
  local function relu() return nn.Activation{activation = 'relu'} end

  local function block(x, in_filters, filters, strides)
    local h = relu()(bn()(conv(filters, 3, strides)(x)))
    h = bn()(conv(filters, 3)(h))
    local s = x
    if strides ~= 1 or in_filters ~= filters then
      s = bn()(conv(filters, 1, strides)(x))
    end
    return relu()(nn.Add{}{h, s})
  end

  local inputs = nn.Input{shape = opts.input_shape or {32, 32, 3}}
  local x = relu()(bn()(conv(16, 3)(inputs)))
  local in_filters = 16
  for stage, filters in ipairs {16, 32, 64} do
    for b = 1, n do
      local strides = (stage > 1 and b == 1) and 2 or 1
      x = block(x, in_filters, filters, strides)
      in_filters = filters
    end
  end
  x = nn.GlobalAveragePooling2D{}(x)
  local outputs = nn.Dense{units = classes, kernel_initializer = 'he_normal'}(x)
  return nn.Model{inputs = inputs, outputs = outputs, seed = opts.seed,
                  name = opts.name or ('resnet' .. (6 * n + 2))}
end
