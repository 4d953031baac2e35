-- Every activation by its Keras name, on Dense and as an Activation layer,
-- and the LeakyReLU layer: the toy problem trains to a finite loss and the
-- summary lists the layers. --case unknown: an activation drun does not know
-- is an error that lists the ones it does.
local drun = require 'drun'
local nn, optim = drun.nn, drun.optim
local opt = drun.args{case = 'train'}

if opt.case == 'unknown' then
  nn.Sequential{nn.Dense{units = 4, activation = 'mish', input_shape = {2}}}:summary()
  return
end

local names = {'linear', 'relu', 'sigmoid', 'tanh', 'softmax', 'elu', 'selu', 'softplus',
               'softsign', 'swish', 'silu', 'gelu', 'hard_sigmoid', 'exponential', 'leaky_relu'}
local layers = {}
for i, name in ipairs(names) do
  layers[i] = nn.Dense{units = 6, activation = name, input_shape = i == 1 and {2} or nil}
end
layers[#layers + 1] = nn.Activation{activation = 'gelu'}
layers[#layers + 1] = nn.LeakyReLU{negative_slope = 0.2}
layers[#layers + 1] = nn.Dense{units = 2}
layers.seed = 3
local model = nn.Sequential(layers)
model:summary()
model:compile{optimizer = optim.Adam{learning_rate = 0.01}, metrics = {'accuracy'},
              loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true}}
local r = model:fit{x = require('toy_points')():batch(16), epochs = 2}
print(string.format('activations trained: loss %.4f finite %s', r.train.loss,
                    tostring(r.train.loss == r.train.loss and math.abs(r.train.loss) < math.huge)))
