-- The smallest complete experiment: iris from a CSV file, 80% to train on and
-- 20% held out, a two-layer perceptron trained with Adam, evaluated, and saved
-- as a Keras HDF5 file (keras.models.load_model reads it).
--   drun scripts/iris_mlp.lua [--epochs 100] [--save runs/iris_mlp.h5]
local drun = require 'drun'
local nn, optim, losses = drun.nn, drun.optim, drun.losses

local here = (arg and arg[0] or ''):match('^(.*)/') or '.'
local opt = drun.args{data = {here .. '/../data/iris.csv', 'the CSV file (a species column)'},
                      epochs = {100, 'passes over the training part'},
                      batch_size = {16, 'examples per step'},
                      seed = {1, 'the split, the shuffle and the initial weights'},
                      save = {'runs/iris_mlp.h5', 'the Keras HDF5 file written at the end'}}

-- Four measurements per flower; 'species' (0, 1, 2) is the label. The file is
-- sorted by species, so the split draws its rows with a seed.
local iris = drun.data.csv{path = opt.data, label = 'species'}
local train, test = iris:split{fraction = 0.8, seed = opt.seed}
print(string.format('iris_mlp: %d flowers to train on, %d to test', train:size(), test:size()))

local model = nn.Sequential{
  nn.Dense(16, 'relu', {input_shape = {4}}),
  nn.Dense(3),  -- one logit per species
  seed = opt.seed,
}
model:compile{
  optimizer = optim.Adam{learning_rate = 0.01},
  loss = losses.SparseCategoricalCrossentropy{from_logits = true},
  metrics = {'accuracy'},
}
model:fit{x = train:shuffle(opt.seed):batch(opt.batch_size), epochs = opt.epochs}

local result = model:evaluate(test)
print(string.format('iris_mlp: test accuracy %.3f, loss %.4f on %d flowers', result.accuracy,
                    result.loss, result.examples))
if opt.save ~= '' then model:save(opt.save) end
