// What the Keras and checkpoint targets do with a file, whether it came as
// raw bytes (fuzz_keras, fuzz_checkpoint) or was written from a description
// (fuzz_keras_layout, fuzz_checkpoint_layout, tools/fuzz/h5_layout.hpp).
#pragma once
#include <filesystem>
#include <string>

#include "fuzz_input.hpp"
#include "keras/keras_h5.hpp"
#include "optim/optimizer.hpp"
#include "train/checkpoint.hpp"

namespace drun::fuzz {

// Keras HDF5 import: load_model (model_config JSON, then the weights by the
// config's layout), inspect, and load_weights into a fixed model by order and
// by name.
inline void read_as_keras(const std::string& path) {
  static const json mlp = json::parse(R"({"name": "mlp", "input_shape": [4],
    "layers": [{"class_name": "Dense", "config": {"units": 3, "activation": "relu"}},
               {"class_name": "Dense", "config": {"units": 2}}]})");
  expect_clean([&] { keras::load_model(path); });
  expect_clean([&] { keras::inspect(path); });
  nn::Model model(mlp, 1);
  expect_clean([&] { keras::load_weights(model, path, false); });
  expect_clean([&] { keras::load_weights(model, path, true); });
}

// Checkpoint restore of `model_dir`, whose newest checkpoint is ckpt-2.h5,
// for a small model with Adam's slots: restore skips an unreadable one, and
// a readable one of another shape is a UsageError.
inline void read_as_checkpoint(const std::filesystem::path& model_dir) {
  static const json spec = json::parse(R"({"name": "mlp", "input_shape": [4],
    "layers": [{"class_name": "Dense", "config": {"units": 3}},
               {"class_name": "BatchNormalization", "config": {}},
               {"class_name": "Dropout", "config": {"rate": 0.5}},
               {"class_name": "Dense", "config": {"units": 2}}]})");
  nn::Model model(spec, 1);
  auto optimizer = optim::make_optimizer(json("adam"));
  train::Checkpoints checkpoints(model_dir.string(), 3);
  expect_clean([&] { checkpoints.restore(model, *optimizer, [](const std::string&) {}); });
  expect_clean([&] { checkpoints.load(2, model, *optimizer); });
}

}  // namespace drun::fuzz
