// A thin RAII layer over the HDF5 C library for the files drun reads and
// writes (Keras models, checkpoints): handles that close themselves, string
// attributes in both of HDF5's string kinds, float datasets as Tensors. Every
// failure is a UsageError naming the file and the object.
#pragma once
#include <hdf5.h>

#include <string>
#include <vector>

#include "tensor/tensor.hpp"

namespace drun::io::h5 {

class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      close_ = o.close_;
      o.id_ = -1;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t id() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
  }
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

// A file open for reading or freshly created; `path` names it in messages.
class File {
 public:
  static File create(const std::string& path);  // truncates
  static File open(const std::string& path);    // read-only; checks it is HDF5
  // A new file in memory (HDF5's core driver; nothing touches the disk);
  // `path` only names it in messages. Its bytes come from image().
  //
  // Files drun writes are made so and written out by io::write_text_atomically:
  // HDF5 writes much of a file only when it flushes or closes it, and HDF5
  // 1.10 crashes at exit after a close that failed (a full disk), so every
  // disk write is drun's own, checked, and the old file stays on failure.
  static File create_in_memory(const std::string& path);
  std::string image() const;
  hid_t id() const { return handle_.id(); }
  const std::string& path() const { return path_; }

 private:
  File(Handle h, std::string path) : handle_(std::move(h)), path_(std::move(path)) {}
  Handle handle_;
  std::string path_;
};

Handle create_group(const File& f, hid_t parent, const std::string& name);
Handle open_group(const File& f, hid_t parent, const std::string& name);
bool exists(hid_t parent, const std::string& name);

// Attributes. Strings are written fixed-length (what every h5py reads back as
// bytes); reading takes fixed- and variable-length ones.
void write_string(const File& f, hid_t object, const std::string& name, const std::string& text);
void write_strings(const File& f, hid_t object, const std::string& name,
                   const std::vector<std::string>& texts);
bool has_attribute(hid_t object, const std::string& name);
std::string read_string(const File& f, hid_t object, const std::string& name);
std::vector<std::string> read_strings(const File& f, hid_t object, const std::string& name);

// Float32 datasets; a '/' in `name` makes intermediate groups.
void write_tensor(const File& f, hid_t parent, const std::string& name, const Tensor& t);
Tensor read_tensor(const File& f, hid_t parent, const std::string& name);
// A dataset's shape, without reading its data.
Shape dataset_shape(const File& f, hid_t parent, const std::string& name);
// The shape of open dataset `set`; UsageError prefixed with `where` when the
// header claims more than the file could hold (a corrupt file is an error,
// not an allocation of terabytes).
Shape checked_extent(hid_t set, const std::string& where);
// Reads open dataset `set` as float32 into `t` (of checked_extent's shape)
// through a memory space of t's own size, so that a file whose dataspace and
// layout disagree cannot make HDF5 write past t; nothing is read for an
// empty t (its data pointer is null). False when HDF5 fails, and without
// reading when the dataset's type is not a plain number or its raw data is
// not where and as large as its layout says (HDF5 trusts a corrupt layout).
bool read_into(hid_t set, Tensor& t);

}  // namespace drun::io::h5
