// Well-formed HDF5 files from a JSON description, for the structure-aware
// fuzz targets (fuzz_keras_layout, fuzz_checkpoint_layout). The byte-level
// targets (fuzz_keras, fuzz_checkpoint) stop within minutes at HDF5 1.10.8's
// own hang and crash on corrupt files (docs/testing.md); these mutate what
// drun reads through the library (groups, attributes of each string kind,
// datasets of any type, shape and layout) while the file itself stays valid,
// so the campaign tests drun's use of HDF5 and not the library's parser.
//
// A node is {"attrs": {name: attr}, "groups": {name: node}, "datasets":
// {name: dataset}}. An attr is {"S": text} (fixed-length string, as drun and
// h5py's bytes write), {"V": text} (variable-length, h5py's str), {"S" or
// "V": [texts]} (string arrays), or {"f4" | "f8" | "i4" | "i8" | "u1":
// [numbers]}. A dataset is {"type": "f4" | "f8" | "f2" | "i4" | "i8" | "u1"
// | "S8", "shape": [...], "values": [numbers, repeated to fill it],
// "layout": "contiguous" | "compact" | "chunked", "chunks": [...]}.
// h5_to_layout.py writes this description of any HDF5 file (the seeds).
#pragma once
#include <hdf5.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "base/options.hpp"
#include "io/h5.hpp"

namespace drun::fuzz::h5_layout {

// Bounds that keep one input fast; a description past them is skipped.
inline constexpr int kMaxDepth = 12;
inline constexpr int64_t kMaxElements = int64_t{1} << 18;
inline constexpr int kMaxRank = 8;

// io::h5::Handle closes each HDF5 object the writer makes.
using io::h5::Handle;

// HDF5's in-memory type for a description's type name; -1 for none.
inline hid_t number_type(const std::string& name) {
  if (name == "f4") return H5T_NATIVE_FLOAT;
  if (name == "f8") return H5T_NATIVE_DOUBLE;
  if (name == "i4") return H5T_NATIVE_INT32;
  if (name == "i8") return H5T_NATIVE_INT64;
  if (name == "u1") return H5T_NATIVE_UINT8;
  return -1;
}

// IEEE half precision, as h5py defines it (HDF5 1.10 has no predefined one).
inline Handle half_type() {
  Handle t(H5Tcopy(H5T_IEEE_F32LE), H5Tclose);
  if (t.valid() && (H5Tset_fields(t.id(), 15, 10, 5, 0, 10) < 0 || H5Tset_size(t.id(), 2) < 0 ||
                    H5Tset_ebias(t.id(), 15) < 0))
    return Handle();
  return t;
}

// Numbers as doubles (non-numbers count as 0), for H5Dwrite/H5Awrite to convert.
inline std::vector<double> numbers(const json& values, int64_t count) {
  std::vector<double> out(static_cast<size_t>(count), 0.0);
  if (!values.is_array() || values.empty()) return out;
  for (int64_t i = 0; i < count; ++i) {
    const json& v = values[static_cast<size_t>(i) % values.size()];
    out[static_cast<size_t>(i)] = v.is_number() ? v.get<double>() : 0.0;
  }
  return out;
}

inline bool write_strings(hid_t object, const std::string& name, const json& texts, bool vlen) {
  const bool scalar = texts.is_string();
  if (!scalar && !texts.is_array()) return false;
  std::vector<std::string> all;
  for (const json& t : scalar ? json::array({texts}) : texts) {
    if (!t.is_string()) return false;
    all.push_back(t.get<std::string>());
  }
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  size_t longest = 1;
  for (const auto& s : all) longest = std::max(longest, s.size());
  if (!type.valid() || H5Tset_size(type.id(), vlen ? H5T_VARIABLE : longest) < 0) return false;
  const hsize_t n = all.size();
  Handle space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle attr(H5Acreate2(object, name.c_str(), type.id(), space.id(), H5P_DEFAULT, H5P_DEFAULT),
              H5Aclose);
  if (!attr.valid()) return false;
  if (vlen) {
    std::vector<const char*> p;
    for (const auto& s : all) p.push_back(s.c_str());
    return p.empty() || H5Awrite(attr.id(), type.id(), p.data()) >= 0;
  }
  std::string packed(all.size() * longest, '\0');
  for (size_t i = 0; i < all.size(); ++i) all[i].copy(&packed[i * longest], longest);
  return packed.empty() || H5Awrite(attr.id(), type.id(), packed.data()) >= 0;
}

inline bool write_attribute(hid_t object, const std::string& name, const json& a) {
  if (!a.is_object() || a.size() != 1) return false;
  const std::string& kind = a.begin().key();
  const json& value = a.begin().value();
  if (kind == "S" || kind == "V") return write_strings(object, name, value, kind == "V");
  const hid_t type = number_type(kind);
  if (type < 0 || !value.is_array() || static_cast<int64_t>(value.size()) > kMaxElements)
    return false;
  const hsize_t n = value.size();
  const auto v = numbers(value, static_cast<int64_t>(n));
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle attr(H5Acreate2(object, name.c_str(), type, space.id(), H5P_DEFAULT, H5P_DEFAULT),
              H5Aclose);
  return attr.valid() && (v.empty() || H5Awrite(attr.id(), H5T_NATIVE_DOUBLE, v.data()) >= 0);
}

// A text field of a description, `fallback` where absent; none (a
// description to skip) where it is there but not text.
inline std::optional<std::string> text_field(const json& d, const char* key, const char* fallback) {
  const auto it = d.find(key);
  if (it == d.end()) return fallback;
  if (!it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

inline bool write_dataset(hid_t parent, const std::string& name, const json& d) {
  if (!d.is_object()) return false;
  const auto type_text = text_field(d, "type", "f4"),
             layout_text = text_field(d, "layout", "contiguous");
  if (!type_text || !layout_text) return false;
  const std::string& type_name = *type_text;
  const json shape_json = d.value("shape", json::array());
  if (!shape_json.is_array() || shape_json.size() > kMaxRank) return false;
  std::vector<hsize_t> shape;
  int64_t count = 1;
  for (const json& s : shape_json) {
    if (!s.is_number_integer() || s.get<int64_t>() < 0 || s.get<int64_t>() > kMaxElements)
      return false;
    shape.push_back(s.get<hsize_t>());
    count *= s.get<int64_t>();
    if (count > kMaxElements) return false;
  }
  const int rank = static_cast<int>(shape.size());
  const bool text = type_name == "S8";
  Handle string_type(H5Tcopy(H5T_C_S1), H5Tclose);
  if (text && H5Tset_size(string_type.id(), 8) < 0) return false;
  const Handle half = half_type();
  const hid_t type = text                ? string_type.id()
                     : type_name == "f2" ? half.id()
                                         : number_type(type_name);
  if (type < 0) return false;
  Handle space(rank ? H5Screate_simple(rank, shape.data(), nullptr) : H5Screate(H5S_SCALAR),
               H5Sclose);
  Handle create(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  const std::string& layout = *layout_text;
  if (layout == "compact") {
    if (count * 8 > 60000 || H5Pset_layout(create.id(), H5D_COMPACT) < 0) return false;
  } else if (layout == "chunked") {
    std::vector<hsize_t> chunks;
    for (const json& c : d.value("chunks", json::array()))
      if (c.is_number_integer() && c.get<int64_t>() > 0 && c.get<int64_t>() <= kMaxElements)
        chunks.push_back(c.get<hsize_t>());
    if (rank == 0 || static_cast<int>(chunks.size()) != rank ||
        H5Pset_chunk(create.id(), rank, chunks.data()) < 0)
      return false;
  }
  Handle links(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(links.id(), 1);
  Handle set(
      H5Dcreate2(parent, name.c_str(), type, space.id(), links.id(), create.id(), H5P_DEFAULT),
      H5Dclose);
  if (!set.valid()) return false;
  if (count == 0) return true;
  if (text) {
    std::string bytes(static_cast<size_t>(count) * 8, 'x');
    return H5Dwrite(set.id(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) >= 0;
  }
  const auto v = numbers(d.value("values", json::array()), count);
  return H5Dwrite(set.id(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0;
}

inline bool write_node(hid_t object, const json& node, int depth) {
  if (!node.is_object() || depth > kMaxDepth) return false;
  if (const auto a = node.find("attrs"); a != node.end()) {
    if (!a->is_object()) return false;
    for (const auto& [name, attr] : a->items())
      if (!write_attribute(object, name, attr)) return false;
  }
  if (const auto g = node.find("groups"); g != node.end()) {
    if (!g->is_object()) return false;
    Handle links(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(links.id(), 1);
    for (const auto& [name, child] : g->items()) {
      // A group named twice (as "a/b" and "a") is opened, not made again.
      Handle group(H5Lexists(object, name.c_str(), H5P_DEFAULT) > 0
                       ? H5Gopen2(object, name.c_str(), H5P_DEFAULT)
                       : H5Gcreate2(object, name.c_str(), links.id(), H5P_DEFAULT, H5P_DEFAULT),
                   H5Gclose);
      if (!group.valid() || !write_node(group.id(), child, depth + 1)) return false;
    }
  }
  if (const auto s = node.find("datasets"); s != node.end()) {
    if (!s->is_object()) return false;
    for (const auto& [name, set] : s->items())
      if (!write_dataset(object, name, set)) return false;
  }
  return true;
}

// Writes the file `description` describes at `path`; false (and a file that
// must not be used) when the description is not one HDF5 can write.
inline bool write(const json& description, const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  return file.valid() && write_node(file.id(), description, 0);
}

}  // namespace drun::fuzz::h5_layout
