#include "keras/keras_h5.hpp"

#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "io/atomic_file.hpp"
#include "io/h5.hpp"

namespace drun::keras {

namespace {

namespace h5 = io::h5;

// The tf.keras 2 HDF5 layout is what drun writes; drun_version says who wrote it.
constexpr const char* kKerasVersion = "2.15.0";
constexpr const char* kDrunVersion = "0.1";

std::string weight_name(const Param& p) {
  return p.name + ":0";
}

void write_weights(const h5::File& f, hid_t group, nn::Model& model) {
  std::vector<std::string> names;
  for (const auto& n : model.nodes()) names.push_back(n.layer->name());
  h5::write_strings(f, group, "layer_names", names);
  h5::write_string(f, group, "backend", "tensorflow");
  h5::write_string(f, group, "keras_version", kKerasVersion);
  for (const auto& n : model.nodes()) {
    const auto g = h5::create_group(f, group, n.layer->name());
    std::vector<std::string> weights;
    for (const Param& p : n.layer->params()) weights.push_back(weight_name(p));
    h5::write_strings(f, g.id(), "weight_names", weights);
    for (const Param& p : n.layer->params()) h5::write_tensor(f, g.id(), weight_name(p), p.value);
  }
}

// Made in memory, then written through a temporary file that replaces
// `path` only once complete (io::write_text_atomically): a failure (a full
// disk) names `path` and leaves whatever was there before.
template <class Write>
void write_atomically(const std::string& path, Write&& write) {
  std::string image;
  {
    const auto f = h5::File::create_in_memory(path);
    write(f);
    image = f.image();
  }
  io::write_text_atomically(path, image);
}

// The weights group of a file: model_weights in a whole-model file, the root
// in a weights-only file.
h5::Handle weights_group(const h5::File& f) {
  if (h5::exists(f.id(), "model_weights")) return h5::open_group(f, f.id(), "model_weights");
  return h5::open_group(f, f.id(), "/");
}

// Keras splits long name lists over layer_names0, layer_names1, ...
std::vector<std::string> read_list(const h5::File& f, hid_t g, const std::string& name) {
  if (h5::has_attribute(g, name)) return h5::read_strings(f, g, name);
  std::vector<std::string> all;
  for (int i = 0; h5::has_attribute(g, name + std::to_string(i)); ++i)
    for (auto& s : h5::read_strings(f, g, name + std::to_string(i))) all.push_back(std::move(s));
  if (all.empty()) throw UsageError(f.path() + ": no attribute '" + name + "'");
  return all;
}

struct FileLayer {
  std::string name;
  std::vector<std::string> weight_names;
};

std::vector<FileLayer> file_layers(const h5::File& f, hid_t g) {
  std::vector<FileLayer> out;
  for (const auto& name : read_list(f, g, "layer_names")) {
    const auto lg = h5::open_group(f, g, name);
    out.push_back({name, read_list(f, lg.id(), "weight_names")});
  }
  return out;
}

void load_layer(const h5::File& f, hid_t g, const FileLayer& from, nn::Layer& into) {
  auto& params = into.params();
  if (from.weight_names.size() != params.size())
    throw UsageError(f.path() + ": layer '" + from.name + "' has " +
                     std::to_string(from.weight_names.size()) + " weights, drun's layer '" +
                     into.name() + "' (" + into.kind() + ") has " + std::to_string(params.size()));
  const auto lg = h5::open_group(f, g, from.name);
  for (size_t i = 0; i < params.size(); ++i) {
    // The shape is checked before the data is read: a file's shape is not
    // trusted with an allocation.
    const Shape shape = h5::dataset_shape(f, lg.id(), from.weight_names[i]);
    if (shape.str() != params[i].value.shape().str())
      throw UsageError(f.path() + ": layer '" + from.name + "': weight '" + from.weight_names[i] +
                       "' has shape " + shape.str() + ", but " + into.kind() + " '" + into.name() +
                       "' as configured needs '" + params[i].name + "' of shape " +
                       params[i].value.shape().str());
    params[i].value.copy_from(h5::read_tensor(f, lg.id(), from.weight_names[i]));
  }
}

json parse_json_attribute(const h5::File& f, const std::string& name) {
  try {
    return json::parse(h5::read_string(f, f.id(), name));
  } catch (const json::exception& e) {
    throw UsageError(f.path() + ": attribute " + name + " is not JSON (" + e.what() + ")");
  }
}

}  // namespace

void save_model(nn::Model& model, const std::string& path, const json& training_config) {
  const json config = model_config(model);  // refuses layers Keras lacks before writing
  write_atomically(path, [&](const h5::File& f) {
    h5::write_string(f, f.id(), "keras_version", kKerasVersion);
    h5::write_string(f, f.id(), "backend", "tensorflow");
    h5::write_string(f, f.id(), "drun_version", kDrunVersion);
    h5::write_string(f, f.id(), "model_config", config.dump());
    if (!training_config.is_null())
      h5::write_string(f, f.id(), "training_config", training_config.dump());
    const auto g = h5::create_group(f, f.id(), "model_weights");
    write_weights(f, g.id(), model);
  });
}

void save_weights(nn::Model& model, const std::string& path) {
  write_atomically(path, [&](const h5::File& f) { write_weights(f, f.id(), model); });
}

void load_weights(nn::Model& model, const std::string& path, bool by_name) {
  const auto f = h5::File::open(path);
  const auto g = weights_group(f);
  const auto layers = file_layers(f, g.id());
  if (by_name) {
    std::map<std::string, const FileLayer*> found;
    for (const auto& l : layers) found[l.name] = &l;
    for (const auto& n : model.nodes()) {
      const auto it = found.find(n.layer->name());
      if (it != found.end()) load_layer(f, g.id(), *it->second, *n.layer);
    }
    return;
  }
  std::vector<const FileLayer*> with_weights;
  for (const auto& l : layers)
    if (!l.weight_names.empty()) with_weights.push_back(&l);
  std::vector<nn::Layer*> targets;
  for (const auto& n : model.nodes())
    if (!n.layer->params().empty()) targets.push_back(n.layer.get());
  if (with_weights.size() != targets.size())
    throw UsageError(path + " has weights for " + std::to_string(with_weights.size()) +
                     " layers, the model has " + std::to_string(targets.size()) +
                     " layers with weights");
  for (size_t i = 0; i < targets.size(); ++i) load_layer(f, g.id(), *with_weights[i], *targets[i]);
}

std::shared_ptr<nn::Model> load_model(const std::string& path) {
  json spec;
  {
    const auto f = h5::File::open(path);
    if (!h5::has_attribute(f.id(), "model_config"))
      throw UsageError(path +
                       " has no model_config: it holds weights only (use load_weights "
                       "on a model built in Lua)");
    spec = spec_from_model_config(parse_json_attribute(f, "model_config"), path);
  }
  std::shared_ptr<nn::Model> model;
  try {
    model = std::make_shared<nn::Model>(spec, 0);
  } catch (const UsageError& e) {
    throw UsageError(path + ": " + e.what());
  }
  load_weights(*model, path, false);
  return model;
}

std::string inspect(const std::string& path) {
  const auto f = h5::File::open(path);
  std::ostringstream out;
  const auto attr = [&](const char* name) {
    return h5::has_attribute(f.id(), name) ? h5::read_string(f, f.id(), name) : std::string("?");
  };
  out << path << ": Keras HDF5 model, keras_version " << attr("keras_version") << ", backend "
      << attr("backend");
  if (h5::has_attribute(f.id(), "drun_version"))
    out << ", written by drun " << attr("drun_version")
        << " (drun labels its files as tf.keras 2.15 writes them, so that Keras readers load them;"
           " docs/formats.md)";
  out << "\n";
  if (!h5::has_attribute(f.id(), "model_config")) {
    out << "(weights only: no model_config)\n";
    return out.str();
  }
  auto model = load_model(path);
  out << model->summary();
  if (h5::has_attribute(f.id(), "training_config")) {
    const json tc = parse_json_attribute(f, "training_config");
    out << "training_config: optimizer "
        << tc.value("optimizer_config", json::object()).value("class_name", std::string("?"))
        << ", loss " << tc.value("loss", json()).dump() << "\n";
  }
  return out.str();
}

}  // namespace drun::keras
