#include "data/hdf5_set.hpp"

#include "base/options.hpp"
#include "tensor/shape.hpp"

namespace drun::data {
namespace {

namespace h5 = io::h5;

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

}  // namespace

Hdf5Set open_hdf5_set(const h5::File& f, const std::string& name) {
  Hdf5Set s;
  s.where = "data.hdf5: " + f.path() + " dataset '" + name + "'";
  if (!h5::exists(f.id(), name))
    throw UsageError("data.hdf5: " + f.path() + " has no dataset '" + name +
                     "'; at its top level: " + top_level_names(f));
  {
    const h5::Handle object{H5Oopen(f.id(), name.c_str(), H5P_DEFAULT), H5Oclose};
    if (H5Iget_type(object.id()) != H5I_DATASET)
      throw UsageError(s.where + " is a group, not a dataset");
  }
  s.data = h5::Handle{H5Dopen2(f.id(), name.c_str(), H5P_DEFAULT), H5Dclose};
  s.type = h5::Handle{H5Dget_type(s.data.id()), H5Tclose};
  s.space = h5::Handle{H5Dget_space(s.data.id()), H5Sclose};
  const int rank = H5Sget_simple_extent_ndims(s.space.id());
  if (!s.data.valid() || !s.type.valid() || rank < 0)
    throw UsageError(s.where + " cannot be read (corrupt?)");
  if (rank == 0) throw UsageError(s.where + " is a single number, not an array of examples");
  if (rank > Shape::kMaxRank)
    throw UsageError(s.where + " has rank " + std::to_string(rank) + ", more than " +
                     std::to_string(Shape::kMaxRank));
  const H5T_class_t cls = H5Tget_class(s.type.id());
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    throw UsageError(s.where +
                     " does not hold numbers (strings, compounds and references are not data)");
  s.dims.resize(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(s.space.id(), s.dims.data(), nullptr);
  s.integer = cls == H5T_INTEGER;
  s.bytes = s.integer && H5Tget_size(s.type.id()) == 1 && H5Tget_sign(s.type.id()) == H5T_SGN_NONE;
  return s;
}

}  // namespace drun::data
