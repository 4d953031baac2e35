// drun.core's data sets: the readers (Fashion-MNIST, idx, NumPy, HDF5,
// CIFAR-10, CSV, image folders) and lists of numbers, as shared, read-only
// userdata that pipelines take.
#include <memory>

#include "binding.hpp"
#include "core.hpp"
#include "data/arrays.hpp"
#include "data/cifar10.hpp"
#include "data/csv.hpp"
#include "data/fashion_mnist.hpp"
#include "data/hdf5_dataset.hpp"
#include "data/idx_pair.hpp"
#include "data/image_folder.hpp"
#include "data/numpy_dataset.hpp"
#include "data/pipeline_spec.hpp"
#include "lua_json.hpp"

namespace drun::lua {

namespace {

using DatasetPtr = std::shared_ptr<const data::Dataset>;

void push_dataset(lua_State* L, data::Dataset&& ds) {
  push_object(L, DatasetPtr(std::make_shared<const data::Dataset>(std::move(ds))), kDataset);
}

const data::Dataset& dataset_arg(lua_State* L) {
  return *arg_object<const data::Dataset>(L, 1, kDataset);
}

std::string data_dir(lua_State* L, int index) {
  if (!lua_isnoneornil(L, index)) return arg_string(L, index, "data set dir");
  return context(L).data_dir;
}

int dataset_fashion_mnist(lua_State* L) {
  return guarded(L, [&] {
    const std::string split = arg_string(L, 1, "fashion_mnist split");
    push_dataset(L, data::load_fashion_mnist(split, data_dir(L, 2)));
    return 1;
  });
}

int dataset_idx(lua_State* L) {
  return guarded(L, [&] {
    const std::string images = arg_string(L, 1, "idx images path");
    const std::string labels = arg_string(L, 2, "idx labels path");
    push_dataset(L, data::load_idx_pair(images, labels, "data.idx"));
    return 1;
  });
}

// core.numpy(npz|nil, x, y): .npy paths, or member names of one .npz file.
int dataset_numpy(lua_State* L) {
  return guarded(L, [&] {
    data::NumpySource source;
    if (!lua_isnoneornil(L, 1)) source.npz = arg_string(L, 1, "numpy npz path");
    source.x = arg_string(L, 2, "numpy x");
    source.y = arg_string(L, 3, "numpy y");
    push_dataset(L, data::load_numpy(source));
    return 1;
  });
}

// core.hdf5(paths, x, y, stream|nil): two datasets of HDF5 files (a list of
// paths); stream true or false, nil to stream by size.
int dataset_hdf5(lua_State* L) {
  return guarded(L, [&] {
    data::Hdf5Source source;
    const json paths = to_json(L, 1, "hdf5 paths");
    if (!paths.is_array())
      throw UsageError("data.hdf5: path must be a file name or a list of them");
    for (const json& p : paths) {
      if (!p.is_string()) throw UsageError("data.hdf5: path must be a file name or a list of them");
      source.paths.push_back(p.get<std::string>());
    }
    source.x = arg_string(L, 2, "hdf5 x");
    source.y = arg_string(L, 3, "hdf5 y");
    if (!lua_isnoneornil(L, 4))
      source.stream =
          lua_toboolean(L, 4) ? data::Hdf5Source::Stream::yes : data::Hdf5Source::Stream::no;
    push_dataset(L, data::load_hdf5(source));
    return 1;
  });
}

// core.cifar10(split, dir|nil, shard): with shard, this worker's part only.
int dataset_cifar10(lua_State* L) {
  return guarded(L, [&] {
    const std::string split = arg_string(L, 1, "cifar10 split");
    const auto& ctx = context(L);
    const bool shard = lua_toboolean(L, 3) != 0;
    push_dataset(L, data::load_cifar10(split, data_dir(L, 2), shard ? ctx.worker_count() : 1,
                                       shard ? ctx.worker_rank() : 0));
    return 1;
  });
}

int dataset_csv(lua_State* L) {
  return guarded(L, [&] {
    const std::string path = arg_string(L, 1, "csv path");
    Options o(lua_isnoneornil(L, 2) ? json::object() : to_json(L, 2), "data.csv");
    o.maybe<std::string>("path");
    const auto opts = data::parse_csv_options(o);
    o.finish();
    push_dataset(L, data::read_csv(path, opts));
    return 1;
  });
}

// core.image_folder(opts): opts as drun.data.image_folder takes them, less scale.
int dataset_image_folder(lua_State* L) {
  return guarded(L, [&] {
    Options o(to_json(L, 1, "options"), "data.image_folder");
    const auto opts = data::parse_image_folder_options(o, context(L).exec.threads);
    o.maybe<bool>("scale");  // the Lua side's
    o.finish();
    push_dataset(L, data::load_image_folder(opts));
    return 1;
  });
}

int dataset_arrays(lua_State* L) {
  return guarded(L, [&] {
    push_dataset(L, data::dataset_from_arrays(to_json(L, 1, "x"), to_json(L, 2, "y")));
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

const luaL_Reg dataset_methods[] = {
    {"size", dataset_size}, {"shape", dataset_shape}, {nullptr, nullptr}};
const luaL_Reg dataset_functions[] = {{"fashion_mnist", dataset_fashion_mnist},
                                      {"idx", dataset_idx},
                                      {"numpy", dataset_numpy},
                                      {"hdf5", dataset_hdf5},
                                      {"cifar10", dataset_cifar10},
                                      {"csv", dataset_csv},
                                      {"image_folder", dataset_image_folder},
                                      {"arrays", dataset_arrays},
                                      {nullptr, nullptr}};

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
