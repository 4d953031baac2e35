// model_config <-> drun model descriptions (see keras_h5.hpp).
#include <algorithm>
#include <map>
#include <set>

#include "keras/keras_h5.hpp"
#include "nn/layer_registry.hpp"

namespace drun::keras {

namespace {

// The registered layer Keras calls `cls` (an alias included), if Keras has it.
const nn::LayerInfo* keras_layer(const std::string& cls) {
  const nn::LayerInfo* info = nn::find_layer(cls);
  return info && info->in_keras ? info : nullptr;
}

// Every Keras class drun reads, for messages.
std::string keras_class_names() {
  std::string out = "InputLayer";
  for (const nn::LayerInfo* info : nn::layer_registry())
    if (info->in_keras) out += ", " + info->about.name();
  return out;
}

json input_layer(const Shape& shape, const std::string& name, const char* dtype) {
  json batch_shape = json::array({nullptr});
  for (int i = 0; i < shape.rank(); ++i) batch_shape.push_back(shape[i]);
  return {
      {"class_name", "InputLayer"},
      {"config",
       {{"batch_input_shape", batch_shape}, {"dtype", dtype}, {"sparse", false}, {"name", name}}}};
}

// The dtype of the model's input in Keras: int32 where only layers taking
// token ids read it (Embedding), as a Keras user declares it; else float32.
const char* input_dtype(const nn::Model& model) {
  bool ids = false;
  for (const auto& n : model.nodes())
    if (std::find(n.inbound.begin(), n.inbound.end(), -1) != n.inbound.end()) {
      if (!keras_layer(n.layer->kind())->takes_ids) return "float32";
      ids = true;
    }
  return ids ? "int32" : "float32";
}

// Whether a Keras InputLayer's dtype holds integers (int32, uint8...).
bool integer_dtype(const json& dtype) {
  const json name =
      dtype.is_object() ? dtype.value("config", json::object()).value("name", json()) : dtype;
  if (!name.is_string()) return false;
  const std::string s = name.get<std::string>();
  return s.starts_with("int") || s.starts_with("uint");
}

// A Keras 3 functional node's reference to output `k` of layer `name`.
json keras_tensor(const std::string& name, int k, const Shape& shape) {
  json batch_shape = json::array({nullptr});
  for (int i = 0; i < shape.rank(); ++i) batch_shape.push_back(shape[i]);
  return {
      {"class_name", "__keras_tensor__"},
      {"config", {{"shape", batch_shape}, {"dtype", "float32"}, {"keras_history", {name, 0, k}}}}};
}

bool is_chain(const nn::Model& model) {
  const auto& nodes = model.nodes();
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].inbound != std::vector<int>{static_cast<int>(i) - 1} ||
        nodes[i].inbound_output[0] != 0 || nodes[i].layer->num_outputs() != 1)
      return false;
  return model.output_node() == static_cast<int>(nodes.size()) - 1;
}

// Options whose neutral value drun can drop; any other value it cannot honour.
bool neutral(const std::string& key, const json& v) {
  static const std::map<std::string, json> values = {{"dilation_rate", json::array({1, 1})},
                                                     {"groups", 1},
                                                     {"lora_rank", nullptr},
                                                     {"synchronized", false},
                                                     {"renorm", false},
                                                     {"renorm_clipping", nullptr},
                                                     {"renorm_momentum", 0.99},
                                                     {"fused", nullptr},
                                                     {"virtual_batch_size", nullptr},
                                                     {"adjustment", nullptr},
                                                     {"keepdims", false},
                                                     {"noise_shape", nullptr},
                                                     {"max_value", nullptr},
                                                     {"negative_slope", 0.0},
                                                     {"threshold", 0.0},
                                                     {"quantization_config", nullptr},
                                                     {"activity_regularizer", nullptr},
                                                     {"build_config", nullptr},
                                                     {"seed", nullptr}};
  const auto it = values.find(key);
  if (it == values.end()) return false;
  if (key == "dilation_rate")  // 1, or 1 along each axis (Conv1D's [1], Conv2D's [1, 1])
    return v.is_number() ? v == 1
                         : v.is_array() && std::all_of(v.begin(), v.end(),
                                                       [](const json& d) { return d == 1; });
  if (key == "fused" && v.is_boolean()) return true;  // an implementation choice, not semantics
  if (key == "renorm_momentum") return true;          // meaningless without renorm
  if (key == "negative_slope" || key == "threshold") return v.is_number() && v.get<double>() == 0;
  return v == it->second;
}

bool dropped_always(const std::string& key) {
  // Initializers only matter before weights are loaded; build_config and
  // module names are Keras' bookkeeping.
  const auto ends = [&](const std::string& s) {
    return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
  };
  return ends("_initializer") || key == "build_config" || key == "module" ||
         key == "registered_name";
}

// A Keras layer config as the options of drun's layer `info`; `depth`
// counts the wrappers around it, which a file may not nest without end.
json drun_config(const nn::LayerInfo& info, const std::string& layer, json config,
                 const std::string& file, int depth = 0) {
  const std::string& cls = info.about.name();
  const std::string who = file + ": layer '" + layer + "' (" + cls + ")";
  if (depth > 4) throw UsageError(who + ": layers wrapped more than 4 deep");
  if (info.from_keras) info.from_keras(config, who);
  json out = json::object();
  for (const auto& [key, value] : config.items()) {
    if (dropped_always(key)) continue;
    const bool regularizer = key.find("_regularizer") != std::string::npos ||
                             key.find("_constraint") != std::string::npos;
    if (regularizer) {
      if (!value.is_null())
        throw UsageError(who + ": " + key + " is not supported by drun (got " + value.dump() + ")");
      continue;
    }
    if (key == "dtype") {
      const json name = value.is_object()
                            ? value.value("config", json::object()).value("name", json("float32"))
                            : value;
      if (name != "float32")
        throw UsageError(who + ": dtype " + name.dump() + " is not supported (float32 only)");
      continue;
    }
    if (key == "data_format") {
      if (value != "channels_last")
        throw UsageError(who + ": data_format " + value.dump() +
                         " is not supported; drun reads channels_last models");
      continue;
    }
    // A layer held by a wrapper (Bidirectional's): a Keras layer
    // description, its config read by the same rules as a model's layers'.
    const OptionSpec* spec = info.about.schema.find(key);
    if (spec && spec->type == OptionType::table && value.is_object() &&
        value.value("class_name", json()).is_string() &&
        value.value("config", json()).is_object()) {
      if (const nn::LayerInfo* held = keras_layer(value["class_name"].get<std::string>())) {
        const json& held_config = value["config"];
        const json held_name = held_config.value("name", json(key));
        json converted =
            drun_config(*held, held_name.is_string() ? held_name.get<std::string>() : key,
                        held_config, file, depth + 1);
        if (held_name.is_string()) converted["name"] = held_name;
        out[key] = {{"class_name", held->about.name()}, {"config", converted}};
        continue;
      }
    }
    // An option of drun's layer goes to it, which checks its value.
    if (spec) {
      out[key] = value;
      continue;
    }
    if (neutral(key, value)) continue;
    static const std::set<std::string> semantic = {
        "dilation_rate", "groups",      "synchronized",      "renorm",
        "keepdims",      "noise_shape", "max_value",         "negative_slope",
        "threshold",     "lora_rank",   "virtual_batch_size"};
    if (semantic.count(key))
      throw UsageError(who + ": " + key + " = " + value.dump() + " is not supported by drun");
    out[key] = value;
  }
  return out;
}

// A tensor a Keras node refers to: output `tensor` of layer `name` (a layer
// with several outputs: a recurrent layer's return_state).
struct Ref {
  std::string name;
  int tensor = 0;
};

// Where the reference gives one, the tensor's index (the third element of
// [name, node, tensor, ...]).
int tensor_index(const json& ref) {
  if (ref.size() < 3) return 0;
  if (!ref[2].is_number_integer() || ref[2].get<int>() < 0)
    throw UsageError("tensor reference " + ref.dump() + " has no valid tensor index");
  return ref[2].get<int>();
}

// The tensors a Keras node refers to, in order: Keras 2 lists
// [name, node, tensor, kwargs]; Keras 3 keras_tensor objects with keras_history.
// Keras nests these a few levels deep; a file nesting deeper is refused
// rather than followed down the stack.
void inbound_refs(const json& node, std::vector<Ref>& refs, int depth = 0) {
  if (depth > 32) throw UsageError("inbound_nodes are nested too deeply");
  if (node.is_object()) {
    if (node.contains("keras_history")) {
      const json& history = node["keras_history"];
      if (!history.is_array() || history.empty() || !history[0].is_string())
        throw UsageError("keras_history " + history.dump() + " does not start with a layer name");
      refs.push_back({history[0].get<std::string>(), tensor_index(history)});
      return;
    }
    for (const auto& [k, v] : node.items()) inbound_refs(v, refs, depth + 1);
  } else if (node.is_array()) {
    if (node.size() >= 3 && node[0].is_string() && node[1].is_number()) {
      refs.push_back({node[0].get<std::string>(), tensor_index(node)});
      return;
    }
    for (const auto& v : node) inbound_refs(v, refs, depth + 1);
  }
}

void inbound_names(const json& node, std::vector<std::string>& names) {
  std::vector<Ref> refs;
  inbound_refs(node, refs);
  for (auto& r : refs) names.push_back(std::move(r.name));
}

// Inputs Keras lets a call name (attention's query, value and key; a
// recurrent layer's initial states), in the order of its parameters.
constexpr const char* kInputKeywords[] = {"query", "value", "key", "initial_state"};
bool is_input_keyword(const std::string& k) {
  return std::ranges::find(kInputKeywords, k) != std::end(kInputKeywords);
}

// The layer names a node's call reads, in its parameters' order: a Keras 3
// node's positional arguments, then inputs given by keyword (where the
// object's own order, alphabetical, would put key before value); a Keras 2
// node's references.
void node_inputs(const json& inbound_nodes, std::vector<Ref>& refs) {
  if (!inbound_nodes.is_array()) return inbound_refs(inbound_nodes, refs);
  for (const auto& node : inbound_nodes) {
    if (!node.is_object() || !node.contains("args")) {
      inbound_refs(node, refs);
      continue;
    }
    inbound_refs(node["args"], refs);
    const json kwargs = node.value("kwargs", json::object());
    if (kwargs.is_object())
      for (const char* k : kInputKeywords)
        if (kwargs.contains(k)) inbound_refs(kwargs[k], refs);
  }
}

// The keyword arguments a layer is called with: a Keras 3 node's "kwargs",
// a Keras 2 reference's fourth element.
json call_kwargs(const json& inbound_nodes) {
  json out = json::object();
  const auto merge = [&](const json& kw) {
    if (kw.is_object())
      for (const auto& [k, v] : kw.items()) out[k] = v;
  };
  if (!inbound_nodes.is_array()) return out;
  for (const auto& node : inbound_nodes) {
    if (node.is_object()) merge(node.value("kwargs", json::object()));
    if (node.is_array())
      for (const auto& ref : node)
        if (ref.is_array() && ref.size() >= 4) merge(ref[3]);
  }
  return out;
}

// A string member of a model_config object, or `fallback` when it is absent.
std::string text_field(const json& object, const char* key, const std::string& fallback,
                       const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_string())
    throw UsageError(where + ": '" + key + "' is " + it->dump() + ", not a string");
  return it->get<std::string>();
}

// Keras classes whose config is a serialized Python function (marshal
// bytecode or source): refused by name, before anything of them is read.
bool carries_code(const std::string& cls) {
  return cls == "Lambda" || cls == "TFOpLambda" || cls == "SlicingOpLambda";
}

std::vector<int64_t> shape_of(const json& batch_shape, const std::string& who) {
  if (!batch_shape.is_array() || batch_shape.size() < 2)
    throw UsageError(who + ": input shape " + batch_shape.dump() + " is not [batch, ...]");
  std::vector<int64_t> dims;
  for (size_t i = 1; i < batch_shape.size(); ++i) {
    if (!batch_shape[i].is_number_integer())
      throw UsageError(who + ": input shape " + batch_shape.dump() +
                       " has an unknown dimension; drun needs fixed input shapes");
    dims.push_back(batch_shape[i].get<int64_t>());
  }
  return dims;
}

json input_shape_of(const json& input_config, const std::string& who) {
  for (const char* k : {"batch_shape", "batch_input_shape"})
    if (input_config.contains(k)) return shape_of(input_config[k], who);
  throw UsageError(who + ": the input layer has no batch_shape");
}

}  // namespace

json model_config(const nn::Model& model) {
  const auto& nodes = model.nodes();
  for (const auto& n : nodes)
    if (!keras_layer(n.layer->kind()))
      throw UsageError("layer '" + n.layer->name() + "' (" + n.layer->kind() +
                       ") has no Keras equivalent; the model cannot be saved in Keras' format");
  const std::string input_name = "input_layer";
  const char* dtype = input_dtype(model);
  if (is_chain(model)) {
    json layers = json::array({input_layer(model.input_shape(), input_name, dtype)});
    for (const auto& n : nodes)
      layers.push_back({{"class_name", n.layer->kind()}, {"config", n.layer->config()}});
    return {{"class_name", "Sequential"}, {"config", {{"name", model.name()}, {"layers", layers}}}};
  }
  json input = input_layer(model.input_shape(), input_name, dtype);
  input["name"] = input_name;
  input["inbound_nodes"] = json::array();
  json layers = json::array({input});
  for (const auto& n : nodes) {
    const auto source = [&](int i) {
      return i < 0 ? input_name : nodes[static_cast<size_t>(i)].layer->name();
    };
    const auto tensor = [&](size_t s) {
      const int i = n.inbound[s], k = n.inbound_output[s];
      return keras_tensor(
          source(i), k,
          i < 0 ? model.input_shape() : nodes[static_cast<size_t>(i)].layer->output_shape(k));
    };
    json node;
    const char* keyword = n.layer->keras_inputs_keyword();
    if (keyword && n.inbound.size() > 1) {
      // The first input as the argument, the others as the keyword's list
      // (LSTM(...)(x, initial_state=[h, c])): Keras 3's form.
      json rest = json::array(), kwargs = n.layer->keras_call_kwargs();
      for (size_t s = 1; s < n.inbound.size(); ++s) rest.push_back(tensor(s));
      kwargs[keyword] = rest;
      node = {{"args", json::array({tensor(0)})}, {"kwargs", kwargs}};
    } else if (n.layer->keras_inputs_as_arguments()) {
      // Keras 3's form: its legacy one passes the inputs as one list.
      json args = json::array();
      for (size_t s = 0; s < n.inbound.size(); ++s) args.push_back(tensor(s));
      node = {{"args", args}, {"kwargs", n.layer->keras_call_kwargs()}};
    } else {
      node = json::array();
      for (size_t s = 0; s < n.inbound.size(); ++s)
        node.push_back(
            {source(n.inbound[s]), 0, n.inbound_output[s], n.layer->keras_call_kwargs()});
    }
    layers.push_back({{"class_name", n.layer->kind()},
                      {"config", n.layer->config()},
                      {"name", n.layer->name()},
                      {"inbound_nodes", json::array({node})}});
  }
  const std::string out = nodes[static_cast<size_t>(model.output_node())].layer->name();
  return {{"class_name", "Functional"},
          {"config",
           {{"name", model.name()},
            {"layers", layers},
            {"input_layers", json::array({json::array({input_name, 0, 0})})},
            {"output_layers", json::array({json::array({out, 0, 0})})}}}};
}

json spec_from_model_config(const json& model_config, const std::string& file) {
  if (!model_config.is_object() || !model_config.contains("config"))
    throw UsageError(file + ": model_config is not a Keras model description");
  const std::string cls = text_field(model_config, "class_name", "", file + ": model_config");
  const json& config = model_config["config"];
  if (cls != "Sequential" && cls != "Functional" && cls != "Model")
    throw UsageError(file + ": model class '" + cls +
                     "' is not supported (Sequential and functional models are)");
  const json layers = config.is_object() ? config.value("layers", json()) : json();
  if (!layers.is_array()) throw UsageError(file + ": model_config has no list of layers");
  json spec = {{"name", text_field(config, "name", "model", file + ": model_config")},
               {"layers", json::array()}};
  std::map<std::string, int> index;  // layer name -> drun node; the input is -1
  bool have_input = false;
  // An integer input (token ids) is read as float32 ids, exact below 2^24:
  // only into layers that take ids (Embedding), checked as they are read.
  std::string int_input;
  for (size_t i = 0; i < layers.size(); ++i) {
    const json& l = layers[i];
    const std::string where = file + ": layer " + std::to_string(i);
    if (!l.is_object() || !l.value("config", json::object()).is_object())
      throw UsageError(where + " of model_config is not a Keras layer description");
    const std::string given = text_field(l, "class_name", "", where);
    const nn::LayerInfo* info = keras_layer(given);
    const std::string lcls = info ? info->about.name() : given;
    const json lconfig = l.value("config", json::object());
    const std::string name = text_field(l, "name", text_field(lconfig, "name", "", where), where);
    const std::string who = file + ": layer '" + name + "' (" + lcls + ")";
    if (carries_code(lcls))
      throw UsageError(file + ": layer '" + name + "' is a " + lcls +
                       " layer, which holds Python code; drun never runs code from a model file "
                       "(rebuild the model without it)");
    if (!info && lcls != "InputLayer")
      throw UsageError(file + ": layer '" + name + "' has class '" + lcls +
                       "', which drun does not support (it reads " + keras_class_names() + ")");
    try {
      if (lcls == "InputLayer") {
        if (have_input) throw UsageError(file + ": models with several inputs are not supported");
        spec["input_shape"] = input_shape_of(lconfig, who);
        if (integer_dtype(lconfig.value("dtype", json()))) int_input = lconfig["dtype"].dump();
        index[name] = -1;
        have_input = true;
        continue;
      }
      if (!have_input) {  // Keras 2 Sequential: the first layer carries the input shape
        for (const char* k : {"batch_input_shape", "batch_shape"})
          if (lconfig.contains(k)) {
            spec["input_shape"] = shape_of(lconfig[k], who);
            have_input = true;
          }
        if (!have_input) throw UsageError(file + ": the model has no input shape");
      }
      const auto reads_input = [&] {
        if (cls == "Sequential") return spec["layers"].empty();
        std::vector<std::string> names;
        inbound_names(l.value("inbound_nodes", json::array()), names);
        return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
          const auto it = index.find(n);
          return it != index.end() && it->second < 0;
        });
      };
      if (!int_input.empty() && !info->takes_ids && reads_input())
        throw UsageError(who + ": reads the model's input of dtype " + int_input +
                         "; drun takes integer inputs only into layers of token ids (Embedding)");
      json entry = {{"class_name", lcls}, {"config", drun_config(*info, name, lconfig, file)}};
      entry["config"]["name"] = name;
      entry["config"].erase("batch_input_shape");
      entry["config"].erase("batch_shape");
      if (cls != "Sequential") {
        std::vector<Ref> refs;
        try {
          node_inputs(l.value("inbound_nodes", json::array()), refs);
        } catch (const UsageError& e) {
          throw UsageError(who + ": " + e.what());
        }
        json inbound = json::array();
        for (const auto& r : refs) {
          const auto it = index.find(r.name);
          if (it == index.end())
            throw UsageError(who + ": takes input from unknown layer '" + r.name + "'");
          if (r.tensor == 0)
            inbound.push_back(it->second);
          else
            inbound.push_back({it->second, r.tensor});  // nn::Model checks it exists
        }
        entry["inbound"] = inbound;
        // Call arguments that are options of drun's layer (use_causal_mask)
        // join its config; others only at their neutral values.
        const json kwargs = call_kwargs(l.value("inbound_nodes", json::array()));
        for (const auto& [k, v] : kwargs.items()) {
          std::vector<std::string> tensors;
          inbound_names(v, tensors);
          if (!tensors.empty()) {
            if (is_input_keyword(k)) continue;  // read above, as an input
            throw UsageError(who + ": call argument " + k + " (a tensor, from '" + tensors[0] +
                             "') is not supported by drun");
          }
          if (info->about.schema.find(k)) {
            entry["config"][k] = v;
          } else if (!v.is_null() && v != false) {
            throw UsageError(who + ": call argument " + k + " = " + v.dump() +
                             " is not supported by drun");
          }
        }
      }
      index[name] = static_cast<int>(spec["layers"].size());
      spec["layers"].push_back(entry);
    } catch (const json::exception& e) {
      // A value of an unexpected type deep in a layer's config.
      throw UsageError(who + ": malformed config (" + e.what() + ")");
    }
  }
  if (spec["layers"].empty()) throw UsageError(file + ": the model has no layers");
  if (cls != "Sequential") {
    std::vector<Ref> outs;
    try {
      inbound_refs(config.value("output_layers", json::array()), outs);
    } catch (const UsageError& e) {
      throw UsageError(file + ": output_layers: " + e.what());
    }
    if (outs.size() != 1)
      throw UsageError(file + ": models with " + std::to_string(outs.size()) +
                       " outputs are not supported (one output)");
    const auto it = index.find(outs[0].name);
    if (it == index.end() || it->second < 0)
      throw UsageError(file + ": unknown output layer '" + outs[0].name + "'");
    if (outs[0].tensor != 0)
      throw UsageError(file + ": the model's output is output " + std::to_string(outs[0].tensor) +
                       " of layer '" + outs[0].name +
                       "'; drun's model outputs a layer's first output only");
    spec["output"] = it->second;
  }
  return spec;
}

}  // namespace drun::keras
