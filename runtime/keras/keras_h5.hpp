// Keras' HDF5 model format (the `.h5` of tf.keras 2.x, which Keras 3 still
// reads and writes): a model drun trained loads in Keras and predicts the
// same, and a model Keras saved loads into drun.
//
// File layout (docs/formats.md; tests/interop checks it against Keras 3 and h5py):
//   attributes keras_version, backend, model_config (JSON: Sequential or
//   Functional), training_config (when compiled), drun_version;
//   group model_weights: attributes layer_names, backend, keras_version; one
//   group per layer with attribute weight_names ("dense/kernel:0", ...) and
//   the datasets at model_weights/<layer>/<weight name>, in Keras' layouts.
#pragma once
#include <memory>
#include <string>

#include "base/options.hpp"
#include "nn/model.hpp"

namespace drun::keras {

// Keras' model_config of a drun model: a Sequential for a chain of layers, a
// Functional model for a graph (residual blocks). Throws UsageError naming a
// layer whose class Keras lacks.
json model_config(const nn::Model& model);
// A drun model description from a Keras model_config; `file` names the source
// in messages. Throws UsageError for unsupported classes and options
// (channels_first, dilation, regularizers, ...), naming the layer.
json spec_from_model_config(const json& model_config, const std::string& file);

// Writes atomically (temporary file, fsync, rename). `training_config` may be null.
void save_model(nn::Model& model, const std::string& path, const json& training_config);
void save_weights(nn::Model& model, const std::string& path);
// Weights from a Keras file (a whole model or weights only) into `model`:
// layers with weights in order, or matched by layer name when `by_name`.
// Throws UsageError naming the file, the layer and the shapes on a mismatch.
void load_weights(nn::Model& model, const std::string& path, bool by_name = false);
// A whole model from a Keras file: its architecture, then its weights.
std::shared_ptr<nn::Model> load_model(const std::string& path);

// What `drun inspect` prints: the writer's Keras version and backend, then
// every layer with its class, output shape and parameter count.
std::string inspect(const std::string& path);

}  // namespace drun::keras
