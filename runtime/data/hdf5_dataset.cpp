#include "data/hdf5_dataset.hpp"

#include <vector>

#include "base/options.hpp"
#include "io/h5.hpp"

namespace drun::data {
namespace {

namespace h5 = io::h5;

std::string where(const Hdf5Source& s, const std::string& set) {
  return "data.hdf5: " + s.path + " dataset '" + set + "'";
}

// The names at the file's top level, for the message when one is missing.
std::string top_level_names(const h5::File& f) {
  std::string names;
  H5Literate(
      f.id(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
        auto& s = *static_cast<std::string*>(out);
        s += (s.empty() ? "" : ", ") + std::string(name);
        return 0;
      },
      &names);
  return names.empty() ? "nothing" : names;
}

// Reads dataset `set` whole: bytes for a uint8 dataset where `keep_bytes`,
// int32 for an integer one where `keep_integers`, else float32.
Tensor read_set(const h5::File& f, const Hdf5Source& s, const std::string& set, bool keep_bytes,
                bool keep_integers) {
  if (!h5::exists(f.id(), set))
    throw UsageError("data.hdf5: " + s.path + " has no dataset '" + set +
                     "'; at its top level: " + top_level_names(f));
  {
    const h5::Handle object{H5Oopen(f.id(), set.c_str(), H5P_DEFAULT), H5Oclose};
    if (H5Iget_type(object.id()) != H5I_DATASET)
      throw UsageError(where(s, set) + " is a group, not a dataset");
  }
  h5::Handle data{H5Dopen2(f.id(), set.c_str(), H5P_DEFAULT), H5Dclose};
  h5::Handle type{H5Dget_type(data.id()), H5Tclose};
  h5::Handle space{H5Dget_space(data.id()), H5Sclose};
  const int rank = H5Sget_simple_extent_ndims(space.id());
  if (!data.valid() || !type.valid() || rank < 0)
    throw UsageError(where(s, set) + " cannot be read (corrupt?)");
  if (rank == 0) throw UsageError(where(s, set) + " is a single number, not an array of examples");
  if (rank > Shape::kMaxRank)
    throw UsageError(where(s, set) + " has rank " + std::to_string(rank) + ", more than " +
                     std::to_string(Shape::kMaxRank));
  const H5T_class_t cls = H5Tget_class(type.id());
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    throw UsageError(where(s, set) +
                     " does not hold numbers (strings, compounds and references are not data)");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.id(), dims.data(), nullptr);
  const Shape shape(std::vector<int64_t>(dims.begin(), dims.end()));
  const bool is_bytes =
      cls == H5T_INTEGER && H5Tget_size(type.id()) == 1 && H5Tget_sign(type.id()) == H5T_SGN_NONE;
  Tensor t;
  hid_t memory = H5T_NATIVE_FLOAT;
  if (keep_bytes && is_bytes) {
    t = Tensor(shape, DType::u8);
    memory = H5T_NATIVE_UINT8;
  } else if (keep_integers && cls == H5T_INTEGER) {
    t = Tensor(shape, DType::i32);
    memory = H5T_NATIVE_INT32;
  } else {
    t = Tensor(shape);
  }
  if (H5Dread(data.id(), memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.raw()) < 0)
    throw UsageError(where(s, set) + " cannot be read (truncated or corrupt?)");
  return t;
}

}  // namespace

Dataset load_hdf5(const Hdf5Source& s) {
  const h5::File f = h5::File::open(s.path);
  Dataset d;
  d.x = read_set(f, s, s.x, true, false);
  if (d.x.rank() == 1) d.x = d.x.reshaped({d.x.dim(0), 1});
  d.y = labels_or_targets(read_set(f, s, s.y, false, true), where(s, s.y));
  if (d.x.dim(0) != d.y.dim(0))
    throw UsageError("data.hdf5: " + s.path + ": dataset '" + s.x + "' holds " +
                     std::to_string(d.x.dim(0)) + " examples but '" + s.y + "' holds " +
                     std::to_string(d.y.dim(0)));
  return d;
}

}  // namespace drun::data
