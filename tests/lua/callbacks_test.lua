-- drun.callbacks from a script, on the toy problem (64 points, batch 16: 4
-- steps an epoch). Prints one line per check for run_lua_tests.py.
local drun = require 'drun'
local nn, optim, cb = drun.nn, drun.optim, drun.callbacks
local opt = drun.args{model_dir = '', case = 'all', strategy = 'AllReduce', epochs = 10}

local ds = require('toy_points')()

local function model(lr)
  local m = nn.Sequential{nn.Dense{units = 8, activation = 'relu', input_shape = {2}}, nn.Dense{units = 2}, seed = 3}
  m:compile{optimizer = optim.SGD{learning_rate = lr}, metrics = {'accuracy'},
            loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true}}
  return m
end

-- drun -np 2: every worker stops after the same epoch with the same rates
-- (the chief's decisions), whichever strategy; with a model_dir, a run of
-- fewer epochs continued by a rerun decides as one run.
if opt.case == 'dist' then
  local rates = {}
  local watch = {on_epoch_end = function(self, epoch, logs) rates[#rates + 1] = string.format('%g', logs.learning_rate) end}
  local r = model(0.1):fit{x = ds:batch(8), validation_data = ds:batch(64), epochs = opt.epochs,
    model_dir = opt.model_dir ~= '' and opt.model_dir or nil, save_checkpoints_steps = 4,
    strategy = drun.strategy[opt.strategy]{}, callbacks = {watch,
      cb.ReduceLROnPlateau{patience = 1, factor = 0.5, min_delta = 1000},
      cb.EarlyStopping{patience = 3, min_delta = 1000}}}
  if drun.cluster().role ~= 'ps' then  -- a parameter server serves and returns what it served
    print(string.format('dist %s: epochs %d step %d rates %s', drun.cluster().role, r.epochs,
                        r.global_step, table.concat(rates, ',')))
  end
  return
end

-- A callback of one's own: Keras' logs by name, a batch's loss read lazily,
-- the rate halved after epoch 0, a stop after epoch 2.
local mine = {name = 'mine', epochs = {}, batches = 0, rates = {}}
function mine:on_train_batch_end(batch, logs)
  self.batches = self.batches + 1
  if batch == 0 then self.first_loss = logs.loss end
end
function mine:on_epoch_end(epoch, logs)
  self.epochs[#self.epochs + 1] = epoch
  self.rates[#self.rates + 1] = logs.learning_rate
  self.keys = {}
  for k in pairs(logs) do self.keys[#self.keys + 1] = k end
  table.sort(self.keys)
  if epoch == 0 then self.learning_rate = self.learning_rate / 2 end
  if epoch == 2 then self.stop_training = true end
end
local r = model(0.1):fit{x = ds:batch(16), validation_data = ds:batch(64), epochs = 10, callbacks = {mine}}
print(string.format('mine: epochs %s batches %d loss %s keys %s rates %s,%s epochs_run %d',
                    table.concat(mine.epochs, ','), mine.batches, tostring(mine.first_loss > 0),
                    table.concat(mine.keys, ','), mine.rates[1], mine.rates[2], r.epochs))

-- LearningRateScheduler sets each epoch's rate.
local seen = {}
local watch = {on_epoch_end = function(self, epoch, logs) seen[#seen + 1] = string.format('%g', logs.learning_rate) end}
model(0.1):fit{x = ds:batch(16), epochs = 3, callbacks = {
  cb.LearningRateScheduler(function(epoch, lr) return 0.1 / (epoch + 1) end), watch}}
print('scheduler: ' .. table.concat(seen, ','))

-- EarlyStopping through an Experiment (min_delta so large nothing improves:
-- stops after epoch 1), ModelCheckpoint and CSVLogger into model_dir.
local dir = opt.model_dir
local est = drun.Estimator{model = nn.Sequential{nn.Dense{units = 2, input_shape = {2}}, seed = 1},
                           loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
                           optimizer = optim.SGD{learning_rate = 0.1}, metrics = {'accuracy'},
                           config = drun.RunConfig{model_dir = dir .. '/run', save_checkpoints_secs = 0,
                                                   save_summary_steps = 0}}
local e = drun.Experiment{estimator = est, train_input = ds:batch(16), eval_input = ds:batch(64), epochs = 10,
  callbacks = {cb.EarlyStopping{patience = 1, min_delta = 1000},
               cb.ModelCheckpoint{filepath = dir .. '/m-{epoch:02d}-{val_accuracy:.2f}.h5'},
               cb.CSVLogger(dir .. '/log.csv')}}:run()
print('early: epochs ' .. e.epochs)

-- TerminateOnNaN stops a diverging fit at its first non-finite batch.
local d = model(1e30):fit{x = ds:batch(16), epochs = 50, callbacks = {cb.TerminateOnNaN()}}
print(string.format('nan: stopped %s at step %d', tostring(d.global_step < 200), d.global_step))

-- Bad options name the callback and the value.
local ok, err = pcall(cb.ReduceLROnPlateau, {factor = 2})
print('bad: ' .. tostring(not ok) .. ' ' .. tostring(err))
