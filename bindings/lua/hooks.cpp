#include "hooks.hpp"

#include "base/options.hpp"
#include "binding.hpp"
#include "lua_json.hpp"
#include "train/hook_registry.hpp"

namespace drun::lua {

namespace {

// A Lua table with any of begin, before_step, after_step, end_. Its methods
// are looked up once, here, so that a step costs only the calls themselves.
class LuaHook final : public train::Hook {
 public:
  LuaHook(lua_State* L, int index, std::string name) : L_(L), name_(std::move(name)) {
    lua_pushvalue(L, index);
    ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
    for (int m = 0; m < kMethods; ++m) {
      lua_rawgeti(L, LUA_REGISTRYINDEX, ref_);
      get_field(L, -1, kMethodNames[m]);
      if (lua_isfunction(L, -1)) {
        methods_[m] = luaL_ref(L, LUA_REGISTRYINDEX);
      } else {
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
  }
  ~LuaHook() override {
    for (int m : methods_) luaL_unref(L_, LUA_REGISTRYINDEX, m);
    luaL_unref(L_, LUA_REGISTRYINDEX, ref_);
  }
  LuaHook(const LuaHook&) = delete;
  LuaHook& operator=(const LuaHook&) = delete;
  std::string name() const override { return name_; }

  void begin(train::Trainer&) override {
    if (push_method(kBegin)) call(1, 0);
  }
  void before_step(int64_t global_step) override {
    if (!push_method(kBeforeStep)) return;
    lua_pushnumber(L_, static_cast<double>(global_step));
    call(2, 0);
  }
  bool after_step(const train::StepResult& s) override {
    if (!push_method(kAfterStep)) return false;
    lua_createtable(L_, 0, 6);
    set("step", static_cast<double>(s.global_step));
    set("epoch", static_cast<double>(s.epoch));
    set("loss", s.loss());
    set("learning_rate", s.learning_rate);
    set("batch_size", static_cast<double>(s.batch_size));
    const train::MetricValues running = s.running();
    lua_createtable(L_, 0, static_cast<int>(running.size()));
    for (const auto& [k, v] : running) set(k.c_str(), v);
    lua_setfield(L_, -2, "metrics");
    call(2, 1);
    const bool stop = lua_toboolean(L_, -1) != 0;
    lua_pop(L_, 1);
    return stop;
  }
  void end(train::Trainer&, json& result) override {
    if (!push_method(kEnd)) return;
    push_json(L_, result);
    call(2, 0);
  }

 private:
  enum Method { kBegin, kBeforeStep, kAfterStep, kEnd, kMethods };
  static constexpr const char* kMethodNames[kMethods] = {"begin", "before_step", "after_step",
                                                         "end_"};

  // Pushes the hook's function `method` and the hook table (its self).
  bool push_method(Method method) {
    if (methods_[method] == LUA_NOREF) return false;
    lua_rawgeti(L_, LUA_REGISTRYINDEX, methods_[method]);
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_);
    return true;
  }
  void set(const char* key, double v) {
    lua_pushnumber(L_, v);
    lua_setfield(L_, -2, key);
  }
  // A Lua error in a hook ends training with its message (and traceback line);
  // a usage error raised in it (a bad option) stays one.
  void call(int args, int results) {
    if (lua_pcall(L_, args, results, 0) != 0) {
      const bool usage = is_usage_error(L_, -1);
      std::string msg = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "(error object)";
      lua_pop(L_, 1);
      if (usage) throw UsageError("hook " + name_ + ": " + msg);
      throw std::runtime_error("hook " + name_ + ": " + msg);
    }
  }

  lua_State* L_;
  std::string name_;
  int ref_ = LUA_NOREF;
  int methods_[kMethods] = {LUA_NOREF, LUA_NOREF, LUA_NOREF, LUA_NOREF};
};

}  // namespace

std::vector<std::unique_ptr<train::Hook>> hooks_from_lua(lua_State* L, int index) {
  std::vector<std::unique_ptr<train::Hook>> hooks;
  if (lua_isnoneornil(L, index)) return hooks;
  arg_table(L, index, "hooks");
  const int n = static_cast<int>(lua_objlen(L, index));
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, i);
    if (!lua_istable(L, -1))
      throw UsageError("hooks[" + std::to_string(i) + "] is a " + luaL_typename(L, -1) +
                       ", expected a hook table");
    get_field(L, -1, "_builtin");
    const std::string builtin = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
    lua_pop(L, 1);
    get_field(L, -1, "name");
    const std::string name =
        lua_isstring(L, -1) ? lua_tostring(L, -1) : "hooks[" + std::to_string(i) + "]";
    lua_pop(L, 1);
    if (!builtin.empty()) {
      get_field(L, -1, "_options");
      const json options = to_json(L, -1, builtin);
      lua_pop(L, 1);
      auto hook = train::make_hook(builtin, options);
      if (!hook) throw UsageError("hook '" + builtin + "' is not one that C++ runs");
      hooks.push_back(std::move(hook));
    } else {
      hooks.push_back(std::make_unique<LuaHook>(L, lua_gettop(L), name));
    }
    lua_pop(L, 1);
  }
  return hooks;
}

}  // namespace drun::lua
