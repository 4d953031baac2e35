-- A small decoder-only transformer language model: token + position
-- embeddings, `blocks` pre-norm blocks of causal self-attention and a gelu
-- MLP (4x wide), each added to its input, then a final layer norm and Dense
-- logits over the vocabulary at every step.
--   local transformer_lm = require 'transformer_lm'
--   local model = transformer_lm{vocabulary = 96, steps = 64, width = 128, heads = 4, blocks = 2}
local nn = require('drun').nn

return function(opts)
  local width, heads = opts.width or 128, opts.heads or 4
  local x = nn.Input{shape = {opts.steps}}
  local h = nn.PositionEmbedding(opts.steps)(nn.Embedding(opts.vocabulary, width)(x))
  for _ = 1, opts.blocks or 2 do
    local a = nn.LayerNormalization{epsilon = 1e-5}(h)
    a = nn.MultiHeadAttention{num_heads = heads, key_dim = math.floor(width / heads),
                              use_causal_mask = true}(a, a)
    h = nn.Add(){h, a}
    local m = nn.LayerNormalization{epsilon = 1e-5}(h)
    m = nn.Dense(width)(nn.Dense(4 * width, 'gelu')(m))
    h = nn.Add(){h, m}
  end
  local logits = nn.Dense(opts.vocabulary)(nn.LayerNormalization{epsilon = 1e-5}(h))
  return nn.Model{inputs = x, outputs = logits, name = 'transformer_lm', seed = opts.seed}
end
