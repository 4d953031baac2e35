// drun.core's data sets: the readers of the registry (data/reader_list.hpp),
// opened by name, as shared, read-only userdata that pipelines take.
#include <memory>

#include "binding.hpp"
#include "core.hpp"
#include "data/pipeline_spec.hpp"
#include "data/reader_registry.hpp"
#include "lua_json.hpp"

namespace drun::lua {

namespace {

using DatasetPtr = std::shared_ptr<const data::Dataset>;

const data::Dataset& dataset_arg(lua_State* L) {
  return *arg_object<const data::Dataset>(L, 1, kDataset);
}

// core.open_dataset(name, options): the reader `name` of the registry on
// `options` (drun.data.NAME's table), checked against its schema.
int open_dataset(lua_State* L) {
  return guarded(L, [&] {
    const std::string name = arg_string(L, 1, "data reader name");
    const json options = lua_isnoneornil(L, 2) ? json::object() : to_json(L, 2, "options");
    const auto& ctx = context(L);
    data::ReaderEnv env;
    env.data_dir = ctx.data_dir;
    env.threads = ctx.exec.threads;
    env.worker_count = ctx.worker_count();
    env.worker_rank = ctx.worker_rank();
    auto ds = std::make_shared<const data::Dataset>(
        data::open_reader(name, options, "data." + name, env));
    push_object(L, DatasetPtr(std::move(ds)), kDataset);
    return 1;
  });
}

// ds:size(ops|nil): the examples that the ops' take, skip and split keep.
int dataset_size(lua_State* L) {
  return guarded(L, [&] {
    const data::Dataset& ds = dataset_arg(L);
    const json ops = lua_isnoneornil(L, 2) ? json() : to_json(L, 2, "ops");
    const auto spec = data::parse_pipeline_ops(ops);
    lua_pushnumber(L, static_cast<double>(data::count_selected(spec.select, ds.size())));
    return 1;
  });
}

int dataset_shape(lua_State* L) {
  return guarded(L, [&] {
    push_shape(L, dataset_arg(L).example_shape());
    return 1;
  });
}

// ds:info(): what the reader reports beyond the tensors (data.text: its
// vocabulary_size and vocabulary), as a table.
int dataset_info(lua_State* L) {
  return guarded(L, [&] {
    push_json(L, dataset_arg(L).info);
    return 1;
  });
}

const luaL_Reg dataset_methods[] = {
    {"size", dataset_size}, {"shape", dataset_shape}, {"info", dataset_info}, {nullptr, nullptr}};
const luaL_Reg dataset_functions[] = {{"open_dataset", open_dataset}, {nullptr, nullptr}};

}  // namespace

train::Input input_arg(lua_State* L, int ds_index, int ops_index) {
  train::Input input;
  input.dataset = arg_object<const data::Dataset>(L, ds_index, kDataset);
  if (!lua_isnoneornil(L, ops_index)) input.ops = to_json(L, ops_index, "ops");
  return input;
}

void register_datasets(lua_State* L) {
  define_type<const data::Dataset>(L, kDataset, dataset_methods);
  luaL_register(L, nullptr, dataset_functions);
}

}  // namespace drun::lua
