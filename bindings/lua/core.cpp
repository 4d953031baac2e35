// drun.core's module table and the process functions: the runtime context as
// a table, plan mode's record of a fit, and fail(), the Lua side's way to
// raise a validation error located at the user's script. Models, data sets
// and trainers register their parts from models.cpp, datasets.cpp and
// trainers.cpp. Every function converts values and calls the runtime; C++
// checks the options (Lua tables arrive as JSON).
#include "core.hpp"

#include "binding.hpp"
#include "lua_json.hpp"
#include "nn/model.hpp"

namespace drun::lua {

namespace {

int core_context(lua_State* L) {
  return guarded(L, [&] {
    const auto& ctx = context(L);
    json j = {{"threads", ctx.exec.threads},
              {"data_dir", ctx.data_dir},
              {"tty", ctx.tty},
              {"rank", ctx.comm ? ctx.comm->rank() : 0},
              {"workers", ctx.worker_count()},
              {"host", ctx.comm ? ctx.comm->host() : std::string("localhost")},
              {"role", ctx.role},
              {"task_index", ctx.task_index},
              {"tf_config", ctx.tf_config},
              {"plan", ctx.plan},
              {"device", device_name(ctx.exec.device)}};
    if (ctx.exec.device != Device::cpu) {
      j["gpu"] = ctx.gpu;
      j["gpu_name"] = kernels::cuda_device_name(ctx.gpu);
    }
    push_json(L, j);
    return 1;
  });
}

// core.plan_fit(model, strategy|nil, model_dir|nil): in plan mode, what a fit would run.
int core_plan_fit(lua_State* L) {
  return guarded(L, [&] {
    auto& model = arg_object<nn::Model>(L, 1, kModel);
    const json dir = to_json(L, 3, "model_dir");
    train::plan_fit(context(L), *model, to_json(L, 2, "strategy"),
                    dir.is_string() ? dir.get<std::string>() : "");
    return 0;
  });
}

// core.fail(msg): a Lua-side validation error, located at the user's script.
// It takes guarded()'s path like every other error.
int core_fail(lua_State* L) {
  return guarded(L, [&]() -> int { throw UsageError(arg_string(L, 1, "fail message")); });
}

const luaL_Reg core_functions[] = {{"context", core_context},
                                   {"fail", core_fail},
                                   {"plan_fit", core_plan_fit},
                                   {nullptr, nullptr}};

}  // namespace

int open_core(lua_State* L) {
  lua_newtable(L);
  register_models(L);
  register_datasets(L);
  register_trainers(L);
  register_registries(L);
  luaL_register(L, nullptr, core_functions);
  return 1;
}

}  // namespace drun::lua
