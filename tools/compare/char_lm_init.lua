-- Saves the model scripts/char_lm.lua starts from (the same builder, corpus
-- vocabulary and seed) as Keras HDF5, for tools/compare/char_lm_loss.py to
-- train in Keras from the same weights.
--   drun tools/compare/char_lm_init.lua --model lstm --out init.h5
local drun = require 'drun'

local opt = drun.args{
  model = {'lstm', "'lstm' or 'transformer'"},
  path = {'/usr/share/games/fortunes', 'the corpus scripts/char_lm.lua reads'},
  sequence_length = {64, 'characters per example'},
  seed = {42, "scripts/char_lm.lua's seed"},
  out = {'char_lm_init.h5', 'where to write the model'},
}
local text = drun.data.text{path = opt.path, sequence_length = opt.sequence_length,
                            vocabulary = 'chars'}
local build = require(opt.model == 'lstm' and 'lstm_lm' or 'transformer_lm')
local model = build{vocabulary = text:info().vocabulary_size, steps = opt.sequence_length,
                    seed = opt.seed}
model:save(opt.out)
