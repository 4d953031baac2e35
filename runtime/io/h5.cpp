#include "io/h5.hpp"

#include <cstring>

#include "base/options.hpp"

namespace drun::io::h5 {

namespace {
[[noreturn]] void fail(const File& f, const std::string& what) {
  throw UsageError(f.path() + ": " + what);
}
void quiet() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}
}  // namespace

File File::create(const std::string& path) {
  quiet();
  Handle h{H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose};
  if (!h.valid()) throw UsageError("cannot create " + path);
  return File(std::move(h), path);
}

File File::create_in_memory(const std::string& path) {
  quiet();
  Handle fapl{H5Pcreate(H5P_FILE_ACCESS), H5Pclose};
  // Grows 1 MiB at a time; no backing store: the disk is never touched.
  if (!fapl.valid() || H5Pset_fapl_core(fapl.id(), size_t{1} << 20, 0) < 0)
    throw UsageError("cannot create " + path + " in memory");
  Handle h{H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id()), H5Fclose};
  if (!h.valid()) throw UsageError("cannot create " + path + " in memory");
  return File(std::move(h), path);
}

std::string File::image() const {
  if (H5Fflush(id(), H5F_SCOPE_GLOBAL) < 0) fail(*this, "cannot flush the file in memory");
  const ssize_t size = H5Fget_file_image(id(), nullptr, 0);
  std::string bytes(size > 0 ? static_cast<size_t>(size) : 0, '\0');
  if (size <= 0 || H5Fget_file_image(id(), bytes.data(), bytes.size()) != size)
    fail(*this, "cannot take the file's image from memory");
  return bytes;
}

File File::open(const std::string& path) {
  quiet();
  if (H5Fis_hdf5(path.c_str()) <= 0) throw UsageError(path + " is missing or not an HDF5 file");
  Handle h{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  if (!h.valid()) throw UsageError("cannot open " + path + " (truncated or corrupt?)");
  return File(std::move(h), path);
}

Handle create_group(const File& f, hid_t parent, const std::string& name) {
  Handle lcpl{H5Pcreate(H5P_LINK_CREATE), H5Pclose};
  H5Pset_create_intermediate_group(lcpl.id(), 1);
  Handle g{H5Gcreate2(parent, name.c_str(), lcpl.id(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose};
  if (!g.valid()) fail(f, "cannot create group '" + name + "'");
  return g;
}

Handle open_group(const File& f, hid_t parent, const std::string& name) {
  Handle g{exists(parent, name) ? H5Gopen2(parent, name.c_str(), H5P_DEFAULT) : -1, H5Gclose};
  if (!g.valid()) fail(f, "no group '" + name + "'");
  return g;
}

bool exists(hid_t parent, const std::string& name) {
  // Each step of a path must exist before the next can be asked about.
  size_t pos = 0;
  while (true) {
    pos = name.find('/', pos + 1);
    const std::string prefix = name.substr(0, pos);
    if (H5Lexists(parent, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (pos == std::string::npos) return true;
  }
}

namespace {
void write_fixed(const File& f, hid_t object, const std::string& name,
                 const std::vector<std::string>& texts, bool scalar) {
  size_t width = 1;
  for (const auto& t : texts) width = std::max(width, t.size());
  std::vector<char> buffer(std::max<size_t>(1, width * texts.size()), '\0');
  for (size_t i = 0; i < texts.size(); ++i)
    std::memcpy(buffer.data() + i * width, texts[i].data(), texts[i].size());
  Handle type{H5Tcopy(H5T_C_S1), H5Tclose};
  H5Tset_size(type.id(), width);
  H5Tset_strpad(type.id(), H5T_STR_NULLPAD);
  const hsize_t n = texts.size();
  Handle space{scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose};
  Handle attr{H5Acreate2(object, name.c_str(), type.id(), space.id(), H5P_DEFAULT, H5P_DEFAULT),
              H5Aclose};
  if (!attr.valid() || H5Awrite(attr.id(), type.id(), buffer.data()) < 0)
    fail(f, "cannot write attribute '" + name + "'");
}
}  // namespace

// One string is a scalar attribute, as h5py writes a str.
void write_string(const File& f, hid_t object, const std::string& name, const std::string& text) {
  write_fixed(f, object, name, {text}, true);
}

void write_strings(const File& f, hid_t object, const std::string& name,
                   const std::vector<std::string>& texts) {
  write_fixed(f, object, name, texts, false);
}

bool has_attribute(hid_t object, const std::string& name) {
  return H5Aexists(object, name.c_str()) > 0;
}

std::vector<std::string> read_strings(const File& f, hid_t object, const std::string& name) {
  if (!has_attribute(object, name)) fail(f, "no attribute '" + name + "'");
  Handle attr{H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose};
  Handle type{H5Aget_type(attr.id()), H5Tclose};
  Handle space{H5Aget_space(attr.id()), H5Sclose};
  const hssize_t n = H5Sget_simple_extent_npoints(space.id());
  std::vector<std::string> out;
  if (n <= 0) return out;  // an empty list (e.g. weight_names of a layer without weights)
  if (H5Tget_class(type.id()) != H5T_STRING) fail(f, "attribute '" + name + "' is not a string");
  if (H5Tis_variable_str(type.id()) > 0) {
    std::vector<char*> ptrs(static_cast<size_t>(n), nullptr);
    Handle mem{H5Tcopy(H5T_C_S1), H5Tclose};
    H5Tset_size(mem.id(), H5T_VARIABLE);
    H5Tset_cset(mem.id(), H5Tget_cset(type.id()));  // Keras 3 writes some as UTF-8
    // A read that fails part way (a corrupt global heap) has allocated some
    // strings already: reclaimed either way (the others are still null).
    const bool read = H5Aread(attr.id(), mem.id(), ptrs.data()) >= 0;
    if (read)
      for (char* p : ptrs) out.emplace_back(p ? p : "");
    H5Dvlen_reclaim(mem.id(), space.id(), H5P_DEFAULT, ptrs.data());
    if (!read) fail(f, "cannot read '" + name + "'");
    return out;
  }
  const size_t width = H5Tget_size(type.id());
  std::vector<char> buffer(width * static_cast<size_t>(n));
  Handle mem{H5Tcopy(H5T_C_S1), H5Tclose};
  H5Tset_size(mem.id(), width);
  H5Tset_strpad(mem.id(), H5T_STR_NULLPAD);  // NULLTERM would drop a full-width string's last byte
  H5Tset_cset(mem.id(), H5Tget_cset(type.id()));
  if (H5Aread(attr.id(), mem.id(), buffer.data()) < 0) fail(f, "cannot read '" + name + "'");
  for (hssize_t i = 0; i < n; ++i) {
    const char* s = buffer.data() + static_cast<size_t>(i) * width;
    out.emplace_back(s, strnlen(s, width));
  }
  return out;
}

std::string read_string(const File& f, hid_t object, const std::string& name) {
  const auto all = read_strings(f, object, name);
  if (all.size() != 1) fail(f, "attribute '" + name + "' is not one string");
  return all[0];
}

void write_tensor(const File& f, hid_t parent, const std::string& name, const Tensor& device_t) {
  const Tensor t = device_t.to(Device::cpu);
  std::vector<hsize_t> dims;
  for (int i = 0; i < t.shape().rank(); ++i) dims.push_back(static_cast<hsize_t>(t.dim(i)));
  Handle space{H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose};
  Handle lcpl{H5Pcreate(H5P_LINK_CREATE), H5Pclose};
  H5Pset_create_intermediate_group(lcpl.id(), 1);
  Handle set{H5Dcreate2(parent, name.c_str(), H5T_IEEE_F32LE, space.id(), lcpl.id(), H5P_DEFAULT,
                        H5P_DEFAULT),
             H5Dclose};
  if (!set.valid() ||
      H5Dwrite(set.id(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.f32()) < 0)
    fail(f, "cannot write dataset '" + name + "'");
}

namespace {
Handle open_dataset(const File& f, hid_t parent, const std::string& name) {
  if (!exists(parent, name)) fail(f, "no dataset '" + name + "'");
  Handle set{H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose};
  if (!set.valid()) fail(f, "'" + name + "' is not a dataset");
  return set;
}

Shape shape_of(const File& f, hid_t set, const std::string& name) {
  return checked_extent(set, f.path() + ": dataset '" + name + "'");
}
}  // namespace

namespace {

// Whether the raw data of `set` lies where its layout says and is as large as
// `elements` values of its type: HDF5 trusts a file's layout message, so a
// corrupt one (tools/fuzz/fuzz_checkpoint: a dataset whose stored size
// disagreed with its extent) made H5Dread copy from a wild address inside the
// library. Chunked data goes through HDF5's own chunk index and filters.
bool layout_is_sound(hid_t set, hsize_t elements) {
  Handle type{H5Dget_type(set), H5Tclose};
  if (!type.valid()) return false;
  const H5T_class_t kind = H5Tget_class(type.id());
  const size_t size = H5Tget_size(type.id());
  if ((kind != H5T_FLOAT && kind != H5T_INTEGER) ||
      (size != 1 && size != 2 && size != 4 && size != 8))
    return false;
  Handle plist{H5Dget_create_plist(set), H5Pclose};
  if (!plist.valid()) return false;
  const hsize_t need = elements * size, stored = H5Dget_storage_size(set);
  switch (H5Pget_layout(plist.id())) {
    case H5D_COMPACT:
      return stored == need;
    case H5D_CONTIGUOUS: {
      if (stored == 0) return true;  // never written: reads as the fill value
      Handle file{H5Iget_file_id(set), H5Fclose};
      hsize_t file_size = 0;
      const haddr_t offset = H5Dget_offset(set);
      return stored == need && file.valid() && H5Fget_filesize(file.id(), &file_size) >= 0 &&
             offset != HADDR_UNDEF && offset <= file_size && need <= file_size - offset;
    }
    case H5D_CHUNKED:
      return true;
    default:  // virtual datasets name other files: never followed
      return false;
  }
}

}  // namespace

bool read_into(hid_t set, Tensor& t) {
  if (t.numel() == 0) return true;  // found by tools/fuzz/fuzz_checkpoint: a null buffer
  const hsize_t n = static_cast<hsize_t>(t.numel());
  if (!layout_is_sound(set, n)) return false;
  Handle memory{H5Screate_simple(1, &n, nullptr), H5Sclose};
  return memory.valid() &&
         H5Dread(set, H5T_NATIVE_FLOAT, memory.id(), H5S_ALL, H5P_DEFAULT, t.f32()) >= 0;
}

Shape checked_extent(hid_t set, const std::string& where) {
  Handle space{H5Dget_space(set), H5Sclose};
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.id()) : -1;
  if (rank < 0 || rank > 8) throw UsageError(where + " cannot be read");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.id(), dims.data(), nullptr);
  // A corrupt header can claim any size; what it claims must be addressable...
  constexpr uint64_t kMax = uint64_t{1} << 40;
  uint64_t bytes = sizeof(float);
  for (hsize_t d : dims) {
    if (d > kMax || (d != 0 && bytes > kMax / d))
      throw UsageError(where + " claims an impossible size (corrupt?)");
    bytes *= d;
  }
  // ... and not much more than the file stores (with room for compression).
  const uint64_t stored = H5Dget_storage_size(set);
  if (bytes > (uint64_t{1} << 20) && stored < bytes / 1024)
    throw UsageError(where + " claims " + std::to_string(bytes) + " bytes but stores " +
                     std::to_string(stored) + " (truncated or corrupt?)");
  return Shape(std::vector<int64_t>(dims.begin(), dims.end()));
}

Shape dataset_shape(const File& f, hid_t parent, const std::string& name) {
  const Handle set = open_dataset(f, parent, name);
  return shape_of(f, set.id(), name);
}

Tensor read_tensor(const File& f, hid_t parent, const std::string& name) {
  const Handle set = open_dataset(f, parent, name);
  Tensor t{shape_of(f, set.id(), name)};
  if (!read_into(set.id(), t))
    fail(f, "cannot read dataset '" + name + "' (truncated or corrupt?)");
  return t;
}

}  // namespace drun::io::h5
