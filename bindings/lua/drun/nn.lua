-- drun.nn: layers by their Keras names, Sequential, and the functional API
-- (nn.Input, calling a layer on a node, nn.Model) for graphs such as residual
-- blocks. A layer here is only its description; the C++ model builds it.
local core = require 'drun.core'
local util = require 'drun.util'
local Model = require 'drun.model'

local unpack = unpack or table.unpack

local nn = {}

local Layer = {}
Layer.__index = Layer

-- The layers, from the C++ registry (nn/layer_list.hpp): each entry's names
-- (the Keras class, then aliases), options and Keras' positional parameters,
-- in Keras' order: nn.Dense(32, 'relu') is nn.Dense{units = 32, activation =
-- 'relu'}. A positional `size` (an option of type pair) takes a number or a
-- table of numbers ({3, 3}).
local registry = core.registry('layers')
local positional_kind = {integer = 'number', number = 'number', string = 'string',
                         ['integer or pair'] = 'size', ['integer or list of one'] = 'size'}
local positional = {}
for _, entry in ipairs(registry) do
  local types = {}
  for _, o in ipairs(entry.options) do types[o.name] = o.type end
  local slots = {}
  for i, name in ipairs(entry.positional) do slots[i] = {name, positional_kind[types[name]] or 'table'} end
  for _, name in ipairs(entry.names) do positional[name] = slots end
end

local type_words = {number = 'a number', string = 'a string', size = 'a number or a table of numbers',
                    table = 'a table'}

local function fits(kind, v)
  if kind == 'size' then return type(v) == 'number' or (type(v) == 'table' and #v > 0) end
  return type(v) == kind
end

-- A table of only list entries where a size may stand is a value ({3, 3}), not options.
local function is_options(v, slot)
  if type(v) ~= 'table' or getmetatable(v) == Layer then return false end
  if next(v) == nil or not slot or slot[2] ~= 'size' then return true end
  for k in pairs(v) do if type(k) ~= 'number' then return true end end
  return false
end

-- The layer's options from its arguments: positional values (before the
-- options table, or as the table's list entries), then options by name.
local function layer_options(class_name, ...)
  local what = 'nn.' .. class_name
  local slots = positional[class_name] or {}
  local args, n = {...}, select('#', ...)
  local options, values = {}, {}
  for i = 1, n do values[i] = args[i] end
  if n > 0 and is_options(args[n], slots[n]) then
    values[n] = nil
    for k, v in pairs(args[n]) do
      if type(k) == 'number' then
        if n > 1 then
          util.fail(what .. ': positional arguments go either before the options table or inside it, not both')
        end
        values[k] = v
      else
        options[k] = v
      end
    end
  end
  for i = 1, n do
    if args[i] == nil and i < n then util.fail(what .. ': argument ' .. i .. ' is nil') end
  end
  local count = 0
  for i in pairs(values) do count = math.max(count, i) end
  if count > #slots then
    local names = {}
    for i, slot in ipairs(slots) do names[i] = slot[1] end
    util.fail(what .. ' takes ' .. (#slots == 0 and 'no positional arguments'
              or 'at most ' .. #slots .. ' positional arguments (' .. table.concat(names, ', ') .. ')')
              .. ', got ' .. count .. '; give the others by name, e.g. ' .. what .. '{' ..
              (slots[1] and slots[1][1] or 'name') .. ' = ...}')
  end
  for i = 1, count do
    local name, kind = slots[i][1], slots[i][2]
    local v = values[i]
    if v == nil then util.fail(what .. ': argument ' .. i .. ' (' .. name .. ') is nil') end
    if not fits(kind, v) then
      util.fail(what .. ': argument ' .. i .. ' is ' .. name .. ', ' .. type_words[kind] .. ', got ' ..
                type(v) .. (type(v) == 'string' and (' "' .. v .. '"') or '') ..
                '; give other options by name, e.g. ' .. what .. '(' .. (i > 1 and '..., ' or '') ..
                '{activation = \'relu\'})')
    end
    if options[name] ~= nil then
      util.fail(what .. ': ' .. name .. ' given twice, as argument ' .. i .. ' and as ' .. name .. ' = ...')
    end
    options[name] = v
  end
  -- A layer given to a wrapper (Bidirectional's) travels as its description.
  for k, v in pairs(options) do
    if getmetatable(v) == Layer then options[k] = {class_name = v.class_name, config = v.config} end
  end
  return options
end

-- Each layer's options are checked where the script writes the layer, so that
-- a mistake names that line, not the Sequential's or compile's.
local function layer_class(class_name)
  local describe = util.described('nn.', class_name, 'layers')
  return function(...)
    if select('#', ...) == 0 then return setmetatable(describe(nil), Layer) end
    return setmetatable(describe(layer_options(class_name, ...)), Layer)
  end
end

for _, entry in ipairs(registry) do
  for _, name in ipairs(entry.names) do nn[name] = layer_class(entry.names[1]) end
end

-- Functional API: a node is an output of a layer inside one graph under construction.
local Node = {}
Node.__index = Node

function nn.Input(opts)
  util.check_keys('nn.Input', opts, {'shape', 'name'})
  if type(opts.shape) ~= 'table' then util.fail('nn.Input needs shape = {height, width, channels} or {features}') end
  local graph = {input_shape = opts.shape, layers = {}}
  return setmetatable({graph = graph, id = -1, output = 0}, Node)
end

-- layer(node), layer{node_a, node_b} or layer(node_a, node_b) (attention's
-- query, value): adds the layer to the graph. A recurrent layer takes initial
-- states as Keras' call does: layer(node, {initial_state = {h, c}}) or
-- layer{node, initial_state = {h, c}}. The call returns one node per output
-- of the layer, as Keras returns its list: local seq, h, c = nn.LSTM{units =
-- 8, return_state = true}(x).
function Layer:__call(inputs, ...)
  if self._used then util.fail(self.class_name .. ': a layer object can be called only once') end
  local args = {...}
  local n = select('#', ...)
  local kwargs = {}
  if n > 0 and type(args[n]) == 'table' and getmetatable(args[n]) ~= Node then
    kwargs = args[n]
    n = n - 1
  end
  if n > 0 then inputs = {inputs, unpack(args, 1, n)} end
  if getmetatable(inputs) == Node then inputs = {inputs} end
  if type(inputs) ~= 'table' or #inputs == 0 then
    util.fail(self.class_name .. ': call it on a node from nn.Input or another layer')
  end
  for k in pairs(kwargs) do
    if k ~= 'initial_state' then
      util.fail(self.class_name .. ": unknown call argument '" .. tostring(k) .. "'; valid: initial_state")
    end
  end
  local nodes = {}
  for i, node in ipairs(inputs) do nodes[i] = node end
  local initial = kwargs.initial_state or inputs.initial_state
  if initial ~= nil then
    if getmetatable(initial) == Node then initial = {initial} end
    if type(initial) ~= 'table' or #initial == 0 then
      util.fail(self.class_name .. ': initial_state is a list of nodes, e.g. {h, c}')
    end
    for _, node in ipairs(initial) do nodes[#nodes + 1] = node end
  end
  local graph = nodes[1].graph
  local inbound = {}
  for i, node in ipairs(nodes) do
    if getmetatable(node) ~= Node then util.fail(self.class_name .. ': input ' .. i .. ' is not a node') end
    if node.graph ~= graph then util.fail(self.class_name .. ': inputs come from different graphs') end
    inbound[i] = node.output == 0 and node.id or {node.id, node.output}
  end
  local outputs = core.layer_outputs(self.class_name, self.config)
  self._used = true
  table.insert(graph.layers, {class_name = self.class_name, config = self.config, inbound = inbound})
  local out = {}
  for k = 1, outputs do out[k] = setmetatable({graph = graph, id = #graph.layers - 1, output = k - 1}, Node) end
  return unpack(out)
end

local function layer_list(layers, what)
  local out = {}
  for i, l in ipairs(layers) do
    if getmetatable(l) ~= Layer then util.fail(what .. ': entry ' .. i .. ' is not a layer') end
    out[i] = {class_name = l.class_name, config = l.config}
  end
  return out
end

-- nn.Sequential{layer, layer, ..., name = 'cnn', seed = 1}
function nn.Sequential(opts)
  if type(opts) ~= 'table' then util.fail('nn.Sequential expects a list of layers') end
  local spec = {name = opts.name or 'sequential', layers = layer_list(opts, 'nn.Sequential')}
  for k in pairs(opts) do
    if type(k) ~= 'number' and k ~= 'name' and k ~= 'seed' then
      util.fail("nn.Sequential: unknown option '" .. tostring(k) .. "'; valid options: name, seed")
    end
  end
  return Model.new(spec, opts.seed)
end

-- nn.Model{inputs = x, outputs = y, name = 'resnet', seed = 1}
function nn.Model(opts)
  util.check_keys('nn.Model', opts, {'inputs', 'outputs', 'name', 'seed'})
  if getmetatable(opts.inputs) ~= Node or getmetatable(opts.outputs) ~= Node then
    util.fail('nn.Model needs inputs = nn.Input{...} and outputs = the last node')
  end
  local graph = opts.inputs.graph
  if opts.outputs.graph ~= graph then util.fail('nn.Model: outputs do not come from these inputs') end
  if opts.outputs.output ~= 0 then
    util.fail('nn.Model: outputs is output ' .. opts.outputs.output .. ' of its layer (a final state); ' ..
              "a model's output is a layer's first output")
  end
  local spec = {name = opts.name or 'model', input_shape = graph.input_shape,
                layers = graph.layers, output = opts.outputs.id}
  return Model.new(spec, opts.seed)
end

return util.strict(nn, 'drun.nn')
