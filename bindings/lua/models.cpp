// drun.core's models: construction from a Keras-style spec, Keras HDF5 files,
// and what a script asks of a model (summary, shapes, spec).
#include <memory>

#include "binding.hpp"
#include "core.hpp"
#include "keras/keras_h5.hpp"
#include "lua_json.hpp"
#include "nn/model.hpp"

namespace drun::lua {

namespace {

nn::Model& model_arg(lua_State* L) {
  return *arg_object<nn::Model>(L, 1, kModel);
}

int model_new(lua_State* L) {
  return guarded(L, [&] {
    const json spec = to_json(L, 1, "model");
    const auto seed = static_cast<uint64_t>(opt_number(L, 2, 0, "model seed"));
    auto model = std::make_shared<nn::Model>(spec, seed);
    model->set_exec(context(L).exec);
    push_object(L, std::move(model), kModel);
    return 1;
  });
}

int model_summary(lua_State* L) {
  return guarded(L, [&] {
    lua_pushstring(L, model_arg(L).summary().c_str());
    return 1;
  });
}

int model_param_count(lua_State* L) {
  return guarded(L, [&] {
    lua_pushnumber(L, static_cast<double>(model_arg(L).param_count()));
    return 1;
  });
}

int model_output_shape(lua_State* L) {
  return guarded(L, [&] {
    push_shape(L, model_arg(L).output_shape());
    return 1;
  });
}

int model_input_shape(lua_State* L) {
  return guarded(L, [&] {
    push_shape(L, model_arg(L).input_shape());
    return 1;
  });
}

int model_spec(lua_State* L) {
  return guarded(L, [&] {
    push_json(L, model_arg(L).spec());
    return 1;
  });
}

// model:save(path, trainer|nil): Keras HDF5; with the model's trainer, its
// training_config (loss, metrics, optimizer) too.
int model_save(lua_State* L) {
  return guarded(L, [&] {
    auto& model = model_arg(L);
    const std::string path = arg_string(L, 2, "save path");
    json training = nullptr;
    if (!lua_isnoneornil(L, 3))
      training = arg_object<train::Session>(L, 3, kTrainer)->training_config();
    keras::save_model(model, path, training);
    return 0;
  });
}

int model_save_weights(lua_State* L) {
  return guarded(L, [&] {
    keras::save_weights(model_arg(L), arg_string(L, 2, "save_weights path"));
    return 0;
  });
}

int model_load_weights(lua_State* L) {
  return guarded(L, [&] {
    keras::load_weights(model_arg(L), arg_string(L, 2, "load_weights path"),
                        lua_toboolean(L, 3) != 0);
    return 0;
  });
}

// core.layer_outputs(class_name, config): how many outputs the layer has (a
// recurrent layer's return_state adds its final states), so that calling it
// in a functional model returns that many nodes.
int core_layer_outputs(lua_State* L) {
  return guarded(L, [&] {
    json config = lua_isnoneornil(L, 2) ? json::object() : to_json(L, 2, "config");
    const std::string name = config.value("name", std::string("layer"));
    const auto layer = nn::make_layer(arg_string(L, 1, "layer class"), config, name);
    lua_pushinteger(L, layer->num_outputs());
    return 1;
  });
}

int core_load_model(lua_State* L) {
  return guarded(L, [&] {
    auto model = keras::load_model(arg_string(L, 1, "load_model path"));
    model->set_exec(context(L).exec);
    push_object(L, std::move(model), kModel);
    return 1;
  });
}

const luaL_Reg model_methods[] = {{"summary", model_summary},
                                  {"param_count", model_param_count},
                                  {"output_shape", model_output_shape},
                                  {"input_shape", model_input_shape},
                                  {"spec", model_spec},
                                  {"save", model_save},
                                  {"save_weights", model_save_weights},
                                  {"load_weights", model_load_weights},
                                  {nullptr, nullptr}};
const luaL_Reg model_functions[] = {{"model", model_new},
                                    {"load_model", core_load_model},
                                    {"layer_outputs", core_layer_outputs},
                                    {nullptr, nullptr}};

}  // namespace

void push_shape(lua_State* L, const Shape& s) {
  lua_createtable(L, s.rank(), 0);
  for (int i = 0; i < s.rank(); ++i) {
    lua_pushnumber(L, static_cast<double>(s[i]));
    lua_rawseti(L, -2, i + 1);
  }
}

void register_models(lua_State* L) {
  define_type<nn::Model>(L, kModel, model_methods);
  luaL_register(L, nullptr, model_functions);
}

}  // namespace drun::lua
