-- drun.data: data sets and their pipelines. A data set is an in-memory C++
-- data set plus a list of pipeline ops (shuffle, batch, take, ...); each op
-- returns a new data set, as tf.data does, and the C++ pipeline runs them.
local core = require 'drun.core'
local util = require 'drun.util'

local data = {}

local Dataset = {}
Dataset.__index = Dataset

-- In plan mode data sets are not read: a stand-in answers for them.
local planned = {size = function() return 0 end, shape = function() return {} end,
                 info = function() return {} end}

local function wrap(handle, ops)
  return setmetatable({_core = handle, _ops = ops or {}}, Dataset)
end

local function plan() return core.context().plan end

local function with_op(self, op)
  local ops = {}
  for i, o in ipairs(self._ops) do ops[i] = o end
  ops[#ops + 1] = op
  return wrap(self._core, ops)
end

-- Number of examples (those that take, skip and split before batch keep) and
-- the shape of one example.
function Dataset:size() return self._core:size(self._ops) end
function Dataset:shape() return self._core:shape() end
-- What the reader reports beyond the examples: data.text's vocabulary_size
-- and, with vocabulary = 'chars', vocabulary (the character of each id).
function Dataset:info() return self._core:info() end

function Dataset:is_batched()
  for _, o in ipairs(self._ops) do if o.op == 'batch' then return true end end
  return false
end

-- The pipeline ops, from the C++ registry (data/pipeline_spec.cpp), each a
-- method that returns a new data set: ds:NAME{options}, or the op's
-- positional shorthand: ds:shuffle(42), ds:batch(64), ds:split(0.8),
-- ds:take(n), ds:skip(n), ds:repeated(n), ds:scale(1 / 255), ds:prefetch(2),
-- ds:shard(4, 0). The options are checked where the script adds the op; what
-- depends on the other ops (split after batch) when the pipeline is read.
-- docs/lua-api.md describes each.
local ops = {}
for _, entry in ipairs(core.registry('pipeline_ops')) do ops[entry.names[1]] = entry end

-- The user's options of op `name` from a method's arguments, checked.
local function op_options(name, ...)
  local what = 'Dataset:' .. name
  local slots, n = ops[name].positional, select('#', ...)
  local first = ...
  local opts
  if n == 1 and type(first) == 'table' then
    opts = util.copy(first)
  elseif n == 0 or (n == 1 and first == nil) then
    opts = {}
  elseif n > #slots then
    util.fail(what .. ' takes ' .. (#slots == 0 and 'a table of options'
              or 'a table of options or ' .. table.concat(slots, ', ')) .. ', got ' .. n .. ' arguments')
  else
    opts = {}
    for i = 1, n do opts[slots[i]] = (select(i, ...)) end
  end
  core.check('pipeline_ops', name, opts)
  return opts
end

local function op_method(name)
  return function(self, ...)
    local op = op_options(name, ...)
    op.op = name
    return with_op(self, op)
  end
end
for name in pairs(ops) do Dataset[name] = op_method(name) end

-- ds:split{fraction = 0.8, seed = 1} -> first, rest: two data sets holding
-- round(0.8 * n) and the other examples.
function Dataset:split(...)
  local opts = op_options('split', ...)
  local function part(first)
    local op = util.copy(opts)
    op.op, op.first = 'split', first
    return with_op(self, op)
  end
  return part(true), part(false)
end

-- `repeat` is a Lua keyword: call it as ds:repeated(n) or ds['repeat'](ds, n).
Dataset.repeated = Dataset['repeat']

-- The readers, from the C++ registry (data/reader_list.hpp): drun.data.NAME{options}
-- checks the options against the reader's schema and reads the data set (in
-- plan mode only checks them: a stand-in answers for the data set). A reader
-- whose entry has a pixel_scale multiplies x by it (pixels to [0, 1]) unless
-- its option `scale` is false. docs/lua-api.md describes each.
local function reader(entry)
  local name = entry.names[1]
  local what = 'data.' .. name
  local scale_default
  for _, o in ipairs(entry.options) do if o.name == 'scale' then scale_default = o.default end end
  return function(opts)
    if opts ~= nil and type(opts) ~= 'table' then
      util.fail(what .. ' expects a table of options, got ' .. type(opts))
    end
    local options = util.copy(opts)
    local ds
    if plan() then
      core.check('readers', name, options)
      ds = wrap(planned)
    else
      ds = wrap(core.open_dataset(name, options))
    end
    local scale = options.scale
    if scale == nil then scale = scale_default end
    if entry.pixel_scale ~= 0 and scale then ds = ds:scale(entry.pixel_scale) end
    return ds
  end
end

for _, entry in ipairs(core.registry('readers')) do
  for _, name in ipairs(entry.names) do data[name] = reader(entry) end
end

return util.strict(data, 'drun.data')
