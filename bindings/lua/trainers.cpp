// drun.core's trainers: a compiled model (train::Session) and its fit,
// evaluate and predict. fit converts its arguments and leaves every decision
// to train::run_fit.
#include <memory>
#include <optional>

#include "binding.hpp"
#include "callbacks.hpp"
#include "core.hpp"
#include "hooks.hpp"
#include "lua_json.hpp"

namespace drun::lua {

namespace {

train::Session& session_arg(lua_State* L) {
  return *arg_object<train::Session>(L, 1, kTrainer);
}

// core.trainer(model, {loss, optimizer, metrics})
int trainer_new(lua_State* L) {
  return guarded(L, [&] {
    auto& model = arg_object<nn::Model>(L, 1, kModel);
    const auto compiled = train::parse_compile_options(to_json(L, 2, "compile"));
    push_object(L, std::make_shared<train::Session>(model, compiled, context(L).exec), kTrainer);
    return 1;
  });
}

// trainer:fit(train_ds, train_ops, eval_ds|nil, eval_ops|nil, {epochs, steps, model_dir,
// strategy, save_checkpoints_steps, save_checkpoints_secs, keep_checkpoint_max,
// save_summary_steps, histogram_freq, eval_every_steps, eval_steps, timeline}, hooks|nil,
// callbacks|nil)
int trainer_fit(lua_State* L) {
  return guarded(L, [&] {
    auto& session = session_arg(L);
    auto request = train::parse_fit_request(to_json(L, 6, "fit"));
    const auto train_input = input_arg(L, 2, 3);
    std::optional<train::Input> eval_input;
    if (!lua_isnoneornil(L, 4)) eval_input = input_arg(L, 4, 5);
    const auto hooks = hooks_from_lua(L, 7);
    for (const auto& h : hooks) request.config.hooks.push_back(h.get());
    const auto callbacks = callbacks_from_lua(L, 8);
    for (const auto& c : callbacks) request.config.callbacks.push_back(c.get());
    push_json(L, train::run_fit(context(L), session, request, train_input,
                                eval_input ? &*eval_input : nullptr));
    return 1;
  });
}

// trainer:evaluate(ds, ops, steps|nil)
int trainer_evaluate(lua_State* L) {
  return guarded(L, [&] {
    auto& session = session_arg(L);
    auto input = train::make_pipeline(input_arg(L, 2, 3));
    const auto steps = static_cast<int64_t>(opt_number(L, 4, -1, "evaluate steps"));
    push_json(L, session.trainer.evaluate(*input, steps).to_json());
    return 1;
  });
}

// trainer:predict(ds, ops): the outputs as a table of rows.
int trainer_predict(lua_State* L) {
  return guarded(L, [&] {
    auto& session = session_arg(L);
    auto input = train::make_pipeline(input_arg(L, 2, 3));
    const Tensor out = session.trainer.predict(*input);
    const int64_t rows = out.dim(0), cols = out.numel() / std::max<int64_t>(1, rows);
    lua_createtable(L, static_cast<int>(rows), 0);
    for (int64_t r = 0; r < rows; ++r) {
      lua_createtable(L, static_cast<int>(cols), 0);
      for (int64_t c = 0; c < cols; ++c) {
        lua_pushnumber(L, out.f32()[r * cols + c]);
        lua_rawseti(L, -2, static_cast<int>(c + 1));
      }
      lua_rawseti(L, -2, static_cast<int>(r + 1));
    }
    return 1;
  });
}

int trainer_global_step(lua_State* L) {
  return guarded(L, [&] {
    lua_pushnumber(L, static_cast<double>(session_arg(L).trainer.global_step()));
    return 1;
  });
}

const luaL_Reg trainer_methods[] = {{"fit", trainer_fit},
                                    {"evaluate", trainer_evaluate},
                                    {"predict", trainer_predict},
                                    {"global_step", trainer_global_step},
                                    {nullptr, nullptr}};
const luaL_Reg trainer_functions[] = {{"trainer", trainer_new}, {nullptr, nullptr}};

}  // namespace

void register_trainers(lua_State* L) {
  define_type<train::Session>(L, kTrainer, trainer_methods);
  luaL_register(L, nullptr, trainer_functions);
}

}  // namespace drun::lua
