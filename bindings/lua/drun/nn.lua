-- drun.nn: layers by their Keras names, Sequential, and the functional API
-- (nn.Input, calling a layer on a node, nn.Model) for graphs such as residual
-- blocks. A layer here is only its description; the C++ model builds it.
local core = require 'drun.core'
local util = require 'drun.util'
local Model = require 'drun.model'

local nn = {}

local Layer = {}
Layer.__index = Layer

local function layer_class(class_name)
  local describe = util.described('nn.', class_name)
  return function(config) return setmetatable(describe(config), Layer) end
end

for _, name in ipairs {'Dense', 'Conv2D', 'MaxPooling2D', 'AveragePooling2D',
                       'GlobalAveragePooling2D', 'Flatten', 'Dropout', 'Activation', 'ReLU',
                       'Softmax', 'LeakyReLU', 'BatchNormalization', 'Add'} do
  nn[name] = layer_class(name)
end
nn.MaxPool2D = nn.MaxPooling2D
nn.AvgPool2D = nn.AveragePooling2D

-- Functional API: a node is an output of a layer inside one graph under construction.
local Node = {}
Node.__index = Node

function nn.Input(opts)
  util.check_keys('nn.Input', opts, {'shape', 'name'})
  if type(opts.shape) ~= 'table' then util.fail('nn.Input needs shape = {height, width, channels} or {features}') end
  local graph = {input_shape = opts.shape, layers = {}}
  return setmetatable({graph = graph, id = -1}, Node)
end

-- layer(node) or layer{node_a, node_b}: adds the layer to the graph.
function Layer:__call(inputs)
  if self._used then util.fail(self.class_name .. ': a layer object can be called only once') end
  if getmetatable(inputs) == Node then inputs = {inputs} end
  if type(inputs) ~= 'table' or #inputs == 0 then
    util.fail(self.class_name .. ': call it on a node from nn.Input or another layer')
  end
  local graph = inputs[1].graph
  local inbound = {}
  for i, node in ipairs(inputs) do
    if getmetatable(node) ~= Node then util.fail(self.class_name .. ': input ' .. i .. ' is not a node') end
    if node.graph ~= graph then util.fail(self.class_name .. ': inputs come from different graphs') end
    inbound[i] = node.id
  end
  self._used = true
  table.insert(graph.layers, {class_name = self.class_name, config = self.config, inbound = inbound})
  return setmetatable({graph = graph, id = #graph.layers - 1}, Node)
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
  local spec = {name = opts.name or 'model', input_shape = graph.input_shape,
                layers = graph.layers, output = opts.outputs.id}
  return Model.new(spec, opts.seed)
end

return nn
