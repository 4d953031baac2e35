// drun's public C++ API (libdrun): option values. Layers, optimizers, losses
// and strategies are named by their Keras / drun names and configured with a
// list of (key, value) pairs, the same keys as in Keras and in drun's Lua API
// (docs/lua-api.md); the runtime checks them and names any unknown one.
//   drun::Layer{"Conv2D", {{"filters", 32}, {"kernel_size", 3}, {"input_shape", {28, 28, 1}}}}
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace drun {

// One option's value: a flag, a whole number, a real number, a string, or a
// list of whole numbers (shapes, kernel sizes, strides).
class Value {
 public:
  using Variant = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>>;
  Value(bool b) : v_(b) {}
  // Any integer type (int, long, size_t...) and any floating-point type.
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Value(T i)
      : v_(static_cast<int64_t>(i)) {}
  template <class T>
  requires std::is_floating_point_v<T> Value(T d) : v_(static_cast<double>(d)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(std::initializer_list<int64_t> list) : v_(std::vector<int64_t>(list)) {}
  Value(std::vector<int64_t> list) : v_(std::move(list)) {}

  const Variant& get() const { return v_; }

 private:
  Variant v_;
};

// Options in the order given; a key given twice is an error.
using Config = std::vector<std::pair<std::string, Value>>;

}  // namespace drun
