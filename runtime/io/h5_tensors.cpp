#include "io/h5_tensors.hpp"

#include <hdf5.h>

#include <cstring>

#include "base/options.hpp"
#include "io/atomic_file.hpp"
#include "io/h5.hpp"

namespace drun::io {

namespace {

// Closes an HDF5 handle on scope exit.
struct Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Handle() {
    if (id >= 0) close(id);
  }
};

// The datasets and the attribute into an open file; UsageError naming `path`.
void write_contents(hid_t file, const std::string& path,
                    const std::vector<std::pair<std::string, Tensor>>& tensors,
                    const json& attributes) {
  Handle lcpl{H5Pcreate(H5P_LINK_CREATE), H5Pclose};
  H5Pset_create_intermediate_group(lcpl.id, 1);
  for (const auto& [name, device_t] : tensors) {
    const Tensor t = device_t.to(Device::cpu);
    std::vector<hsize_t> dims;
    for (int i = 0; i < t.shape().rank(); ++i) dims.push_back(static_cast<hsize_t>(t.dim(i)));
    Handle space{H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose};
    Handle set{
        H5Dcreate2(file, name.c_str(), H5T_IEEE_F32LE, space.id, lcpl.id, H5P_DEFAULT, H5P_DEFAULT),
        H5Dclose};
    if (set.id < 0 ||
        H5Dwrite(set.id, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.f32()) < 0)
      throw UsageError("cannot write " + path + " (dataset '" + name + "')");
  }
  if (attributes.is_null()) return;
  const std::string text = attributes.dump();
  Handle type{H5Tcopy(H5T_C_S1), H5Tclose};
  H5Tset_size(type.id, text.size() + 1);
  Handle space{H5Screate(H5S_SCALAR), H5Sclose};
  Handle attr{H5Acreate2(file, "drun", type.id, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
  if (attr.id < 0 || H5Awrite(attr.id, type.id, text.c_str()) < 0)
    throw UsageError("cannot write " + path + " (its attributes)");
}

}  // namespace

void write_tensors(const std::string& path,
                   const std::vector<std::pair<std::string, Tensor>>& tensors,
                   const json& attributes) {
  // Made in memory and written out by write_text_atomically (h5::File's
  // create_in_memory says why): a full disk is one error naming `path`, the
  // partial temporary file is removed, and `path` (and the checkpoint index)
  // stay as they were.
  std::string image;
  {
    const auto file = h5::File::create_in_memory(path);
    write_contents(file.id(), path, tensors, attributes);
    image = file.image();
  }
  write_text_atomically(path, image);
}

TensorFile read_tensor_file(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (H5Fis_hdf5(path.c_str()) <= 0) throw UsageError(path + " is missing or not an HDF5 file");
  Handle file{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  if (file.id < 0) throw UsageError("cannot open " + path);
  struct Visit {
    hid_t file;
    std::map<std::string, Tensor> out;
    bool failed = false;
    std::string error;
  } visit{file.id, {}, false, {}};
  const auto each = [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
    auto& v = *static_cast<Visit*>(data);
    Handle object{H5Oopen(v.file, name, H5P_DEFAULT), H5Oclose};
    if (object.id < 0) return v.failed = true, -1;
    if (H5Iget_type(object.id) != H5I_DATASET) return 0;
    // No exception may cross the C library's frames: it is kept for later.
    Tensor t;
    try {
      t = Tensor{h5::checked_extent(object.id, "dataset '" + std::string(name) + "'")};
    } catch (const UsageError& e) {
      v.error = e.what();
      return v.failed = true, -1;
    }
    if (!h5::read_into(object.id, t)) return v.failed = true, -1;
    v.out.emplace(name, std::move(t));
    return 0;
  };
  if (H5Lvisit(file.id, H5_INDEX_NAME, H5_ITER_INC, each, &visit) < 0 || visit.failed)
    throw UsageError("cannot read the datasets of " + path + " (" +
                     (visit.error.empty() ? "truncated or corrupt?" : visit.error) + ")");
  TensorFile result{std::move(visit.out), nullptr};
  if (H5Aexists(file.id, "drun") > 0) {
    Handle attr{H5Aopen(file.id, "drun", H5P_DEFAULT), H5Aclose};
    Handle type{H5Aget_type(attr.id), H5Tclose};
    const size_t size = H5Tget_size(type.id);
    std::string text(size, '\0');
    Handle mem{H5Tcopy(H5T_C_S1), H5Tclose};
    H5Tset_size(mem.id, size);
    if (attr.id < 0 || H5Aread(attr.id, mem.id, text.data()) < 0)
      throw UsageError("cannot read the attributes of " + path);
    text.resize(std::strlen(text.c_str()));
    try {
      result.attributes = json::parse(text);
    } catch (const json::exception&) {
      throw UsageError("the attributes of " + path + " are corrupt");
    }
  }
  return result;
}

}  // namespace drun::io
