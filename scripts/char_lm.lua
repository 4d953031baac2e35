-- A character language model on Debian's fortunes (tools/bootstrap installs
-- them): windows of 64 characters, the last tenth of the text held out; an
-- LSTM (models/lstm_lm.lua) or a small transformer (models/transformer_lm.lua)
-- predicts each next character. Reports bits per character on the held-out
-- text (summary.json's eval.bits_per_char).
--   drun scripts/char_lm.lua --model lstm --steps 500
--   drun -np 2 scripts/char_lm.lua --model transformer --steps 500
local drun = require 'drun'

local opt = drun.args{
  model = {'lstm', "'lstm' or 'transformer'"},
  path = {'/usr/share/games/fortunes', 'a text file or a folder of them'},
  sequence_length = {64, 'characters per example'},
  steps = {500, 'training steps (global)'},
  batch_size = {32, 'examples per step on each worker'},
  lr = {0.002, 'learning rate of Adam'},
  eval_steps = {20, 'held-out batches evaluated at the end (0: all)'},
  model_dir = {'', 'checkpoints and summary.json (default: runs/char_lm_<model>); a rerun resumes'},
  seed = {42, 'seed of the weights and of the shuffling'},
}
if opt.model ~= 'lstm' and opt.model ~= 'transformer' then
  require('drun.util').usage_error("--model: expected 'lstm' or 'transformer', got '" .. opt.model .. "'")
end

local text = {path = opt.path, sequence_length = opt.sequence_length, vocabulary = 'chars',
              validation_split = 0.1, subset = 'training'}
local train = drun.data.text(text)
text.subset = 'validation'
local held_out = drun.data.text(text)
-- The launcher's first pass (plan mode, before -np N starts the ranks) reads
-- no data: the model it plans is sized for bytes.
local vocabulary = train:info().vocabulary_size or 256

local build = require(opt.model == 'lstm' and 'lstm_lm' or 'transformer_lm')
local model = build{vocabulary = vocabulary, steps = opt.sequence_length, seed = opt.seed}
if drun.is_chief() then model:summary() end

local result = drun.Experiment{
  estimator = drun.Estimator{
    model = model,
    loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
    optimizer = drun.optim.Adam{learning_rate = opt.lr},
    metrics = {'accuracy'},
    config = drun.RunConfig{model_dir = opt.model_dir ~= '' and opt.model_dir
                                        or 'runs/char_lm_' .. opt.model},
  },
  train_input = train:shuffle{seed = opt.seed}:batch(opt.batch_size):prefetch(2),
  eval_input = held_out:batch(opt.batch_size),
  train_steps = opt.steps,
  eval_steps = opt.eval_steps > 0 and opt.eval_steps or nil,
}:run()

if drun.is_chief() and result.eval then
  print(string.format('held-out loss %.4f, %.3f bits per character, accuracy %.4f',
                      result.eval.loss, result.eval.bits_per_char, result.eval.accuracy))
end
return result
