// Keras HDF5 import: load_model (model_config JSON, then the weights by the
// config's layout), inspect, and load_weights into a fixed model by order and
// by name. HDF5 itself is not the target; how drun uses it is.
#include "fuzz_input.hpp"
#include "keras/keras_h5.hpp"

namespace {
const drun::json& mlp() {
  static const drun::json spec = drun::json::parse(R"({"name": "mlp", "input_shape": [4],
    "layers": [{"class_name": "Dense", "config": {"units": 3, "activation": "relu"}},
               {"class_name": "Dense", "config": {"units": 2}}]})");
  return spec;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = drun::fuzz::as_file("model.h5", data, size);
  drun::fuzz::expect_clean([&] { drun::keras::load_model(path); });
  drun::fuzz::expect_clean([&] { drun::keras::inspect(path); });
  drun::nn::Model model(mlp(), 1);
  drun::fuzz::expect_clean([&] { drun::keras::load_weights(model, path, false); });
  drun::fuzz::expect_clean([&] { drun::keras::load_weights(model, path, true); });
  return 0;
}
