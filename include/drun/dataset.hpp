// drun's public C++ API (libdrun): a data set and its input pipeline. A
// Dataset is a read-only value: shuffle, batch, take... return a new one
// that shares the data and adds a step (applied in drun's fixed order,
// docs/lua-api.md "drun.data").
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace drun {

class Dataset {
 public:
  // Debian's dataset-fashion-mnist: split "train" or "test", from `dir`, else
  // $DRUN_DATA_DIR, else /usr/share/datasets/fashion-mnist; pixels
  // scaled to [0, 1] unless scale is false.
  static Dataset fashion_mnist(const std::string& split, const std::string& dir = "",
                               bool scale = true);
  // Any pair of idx files (gzipped or raw), raw values.
  static Dataset idx(const std::string& images, const std::string& labels);
  // A CSV file: options as drun.data.csv takes them (label column, header...),
  // as JSON text, e.g. R"({"label": "species"})".
  static Dataset csv(const std::string& path, const std::string& options_json = "{}");
  // Rows of x (each of shape example_shape) and their class ids.
  static Dataset arrays(const std::vector<float>& x, const std::vector<int64_t>& example_shape,
                        const std::vector<int>& labels);

  Dataset shuffle(uint64_t seed) const;
  Dataset batch(int64_t size, bool drop_remainder = false) const;
  Dataset take(int64_t examples) const;
  Dataset skip(int64_t examples) const;
  Dataset scale(double factor) const;
  Dataset repeated(int64_t passes) const;

  // Examples it yields per epoch before batching.
  int64_t size() const;
  std::vector<int64_t> example_shape() const;

  struct Impl;  // the runtime's side (bindings/cpp)

 private:
  friend class Model;
  const Impl& impl() const { return *impl_; }
  explicit Dataset(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace drun
