-- A character-level language model: token ids (steps) -> Embedding -> LSTM
-- (every step's state) -> Dense logits over the vocabulary at every step.
--   local lstm_lm = require 'lstm_lm'
--   local model = lstm_lm{vocabulary = 96, steps = 64, embedding = 64, units = 256}
local nn = require('drun').nn

return function(opts)
  return nn.Sequential{
    nn.Embedding{input_dim = opts.vocabulary, output_dim = opts.embedding or 64,
                 input_shape = {opts.steps}},
    nn.LSTM{units = opts.units or 256, return_sequences = true},
    nn.Dense(opts.vocabulary),
    seed = opts.seed,
  }
end
