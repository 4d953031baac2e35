-- Run by a stock luajit with LUA_PATH and LUA_CPATH at an installed prefix
-- (tests/install/install_test.py; tests/lua on LUA_PATH for the toy data
-- set only): `require 'drun'` loads drun/core.so, and a
-- small classifier learns the tests' toy problem (64 points, 2 classes).
local drun = require 'drun'
local nn, optim = drun.nn, drun.optim

local ds = require('toy_points')()  -- tests/lua/toy_points.lua

local model = nn.Sequential{nn.Dense{units = 16, activation = 'relu', input_shape = {2}},
                            nn.Dense{units = 2}, seed = 1}
model:compile{optimizer = optim.Adam{learning_rate = 0.05},
              loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
              metrics = {'accuracy'}}
local before = model:evaluate(ds:batch(64))
local result = model:fit{x = ds:shuffle{seed = 3}:batch(16), epochs = 40}
local after = model:evaluate(ds:batch(64))
print(string.format('lua module: loss %.4f -> %.4f, accuracy %.3f, %d steps', before.loss,
                    after.loss, after.accuracy, result.global_step))
assert(result.global_step == 160, 'expected 160 steps, got ' .. tostring(result.global_step))
assert(after.loss < before.loss / 2, 'the loss did not fall by half')
assert(after.accuracy >= 0.9, 'accuracy ' .. after.accuracy .. ' < 0.9')

-- A user's mistake is a Lua error naming it, not a crash.
local ok, err = pcall(function() nn.Sequential{nn.Dense{units = 'many', input_shape = {2}}} end)
assert(not ok and tostring(err):find('units'), 'a bad layer option: ' .. tostring(err))
print('lua module: ok')
