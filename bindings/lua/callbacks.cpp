#include "callbacks.hpp"

#include "binding.hpp"
#include "lua_json.hpp"
#include "train/callbacks/callback_registry.hpp"

namespace drun::lua {

namespace {

// A user's callback table. Its methods are looked up once, here; a batch's
// logs are read only where the method indexes them (a GPU read each).
class LuaCallback final : public train::Callback {
 public:
  LuaCallback(lua_State* L, int index, std::string name) : L_(L), name_(std::move(name)) {
    lua_pushvalue(L, index);
    ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
    for (int m = 0; m < kMethods; ++m) {
      get_field(L, index, kMethodNames[m]);
      if (lua_isfunction(L, -1))
        methods_[m] = luaL_ref(L, LUA_REGISTRYINDEX);
      else
        lua_pop(L, 1);
    }
    if (methods_[kBatchEnd] != LUA_NOREF) make_batch_logs_metatable();
  }
  ~LuaCallback() override {
    for (int m : methods_) luaL_unref(L_, LUA_REGISTRYINDEX, m);
    luaL_unref(L_, LUA_REGISTRYINDEX, batch_meta_);
    luaL_unref(L_, LUA_REGISTRYINDEX, ref_);
  }
  LuaCallback(const LuaCallback&) = delete;
  LuaCallback& operator=(const LuaCallback&) = delete;
  std::string name() const override { return name_; }
  bool wants_batches() const override { return methods_[kBatchEnd] != LUA_NOREF; }

  void train_begin(train::CallbackControl& c) override {
    invoke(kTrainBegin, c, [] { return 0; });
  }
  void epoch_begin(int64_t epoch, train::CallbackControl& c) override {
    invoke(kEpochBegin, c, [&] {
      lua_pushnumber(L_, static_cast<double>(epoch));
      return 1;
    });
  }
  void epoch_end(int64_t epoch, const train::Logs& logs, train::CallbackControl& c) override {
    invoke(kEpochEnd, c, [&] {
      lua_pushnumber(L_, static_cast<double>(epoch));
      push_logs(logs);
      return 2;
    });
  }
  void test_end(const train::Logs& logs, train::CallbackControl& c) override {
    invoke(kTestEnd, c, [&] {
      push_logs(logs);
      return 1;
    });
  }
  void train_batch_end(int64_t batch, const train::BatchLogs& logs,
                       train::CallbackControl& c) override {
    // The logs table reads through `current` while the method runs, never after.
    *current_ = &logs;
    try {
      invoke(kBatchEnd, c, [&] {
        lua_pushnumber(L_, static_cast<double>(batch));
        lua_newtable(L_);
        lua_rawgeti(L_, LUA_REGISTRYINDEX, batch_meta_);
        lua_setmetatable(L_, -2);
        return 2;
      });
    } catch (...) {
      *current_ = nullptr;
      throw;
    }
    *current_ = nullptr;
  }
  void train_end(train::CallbackControl& c) override {
    invoke(kTrainEnd, c, [] { return 0; });
  }

  json state() const override {
    if (methods_[kGetState] == LUA_NOREF) return nullptr;
    push_method(kGetState);
    call(1, 1);
    json out = lua_isnil(L_, -1) ? json(nullptr) : to_json(L_, -1, name_ + " get_state");
    lua_pop(L_, 1);
    return out;
  }
  void set_state(const json& state) override {
    if (methods_[kSetState] == LUA_NOREF || state.is_null()) return;
    push_method(kSetState);
    push_json(L_, state);
    call(2, 0);
  }

 private:
  enum Method {
    kTrainBegin,
    kEpochBegin,
    kEpochEnd,
    kBatchEnd,
    kTestEnd,
    kTrainEnd,
    kGetState,
    kSetState,
    kMethods
  };
  static constexpr const char* kMethodNames[kMethods] = {
      "on_train_begin", "on_epoch_begin", "on_epoch_end", "on_train_batch_end",
      "on_test_end",    "on_train_end",   "get_state",    "set_state"};

  // logs.loss, logs.accuracy...: read from the step when indexed.
  static int batch_logs_index(lua_State* L) {
    auto* const* current =
        static_cast<const train::BatchLogs* const*>(lua_touserdata(L, lua_upvalueindex(1)));
    if (!*current)
      return luaL_error(L,
                        "a batch's logs are read only during on_train_batch_end; copy the "
                        "values you keep");
    const std::string key = lua_isstring(L, 2) ? lua_tostring(L, 2) : "";
    if (key == "loss") {
      lua_pushnumber(L, (*current)->loss());
      return 1;
    }
    for (const auto& [k, v] : (*current)->running())
      if (k == key) {
        lua_pushnumber(L, v);
        return 1;
      }
    lua_pushnil(L);
    return 1;
  }
  void make_batch_logs_metatable() {
    current_ = static_cast<const train::BatchLogs**>(lua_newuserdata(L_, sizeof(void*)));
    *current_ = nullptr;
    const int holder = luaL_ref(L_, LUA_REGISTRYINDEX);  // keeps the userdata alive
    lua_createtable(L_, 0, 1);
    lua_rawgeti(L_, LUA_REGISTRYINDEX, holder);
    lua_pushcclosure(L_, batch_logs_index, 1);
    lua_setfield(L_, -2, "__index");
    batch_meta_ = luaL_ref(L_, LUA_REGISTRYINDEX);
    luaL_unref(L_, LUA_REGISTRYINDEX, holder);  // the closure holds it now
  }

  void push_logs(const train::Logs& logs) {
    lua_createtable(L_, 0, static_cast<int>(logs.values.size()));
    for (const auto& [k, v] : logs.values) {
      lua_pushnumber(L_, v);
      lua_setfield(L_, -2, k.c_str());
    }
  }

  // Calls `method` with self, what `push_args` pushes, and the rate and stop
  // fields set on self before and read back after.
  template <class F>
  void invoke(Method method, train::CallbackControl& c, F&& push_args) {
    if (methods_[method] == LUA_NOREF) return;
    const double lr = c.learning_rate();
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_);
    lua_pushnumber(L_, lr);
    lua_setfield(L_, -2, "learning_rate");
    lua_pushboolean(L_, 0);
    lua_setfield(L_, -2, "stop_training");
    lua_pop(L_, 1);
    push_method(method);
    call(1 + push_args(), 0);
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_);
    get_field(L_, -1, "stop_training");
    const bool stop = lua_toboolean(L_, -1) != 0;
    lua_pop(L_, 1);
    get_field(L_, -1, "learning_rate");
    if (!lua_isnumber(L_, -1)) {
      lua_pop(L_, 2);
      throw UsageError("callback " + name_ + ": self.learning_rate must be a number");
    }
    const double set = lua_tonumber(L_, -1);
    lua_pop(L_, 2);
    if (set != lr) c.set_learning_rate(set);
    if (stop) c.stop_training();
  }
  void push_method(Method method) const {
    lua_rawgeti(L_, LUA_REGISTRYINDEX, methods_[method]);
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_);
  }
  // A Lua error in a callback ends training with its message.
  void call(int args, int results) const {
    if (lua_pcall(L_, args, results, 0) != 0) {
      std::string msg = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "(error object)";
      lua_pop(L_, 1);
      throw UsageError("callback " + name_ + ": " + msg);
    }
  }

  lua_State* L_;
  std::string name_;
  int ref_ = LUA_NOREF;
  int methods_[kMethods] = {LUA_NOREF, LUA_NOREF, LUA_NOREF, LUA_NOREF,
                            LUA_NOREF, LUA_NOREF, LUA_NOREF, LUA_NOREF};
  int batch_meta_ = LUA_NOREF;
  const train::BatchLogs** current_ = nullptr;  // in a userdata the metatable's closure holds
};

}  // namespace

std::vector<std::unique_ptr<train::Callback>> callbacks_from_lua(lua_State* L, int index) {
  std::vector<std::unique_ptr<train::Callback>> out;
  if (lua_isnoneornil(L, index)) return out;
  arg_table(L, index, "callbacks");
  const int n = static_cast<int>(lua_objlen(L, index));
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, i);
    const std::string where = "callbacks[" + std::to_string(i) + "]";
    if (!lua_istable(L, -1))
      throw UsageError(where + " is a " + luaL_typename(L, -1) + ", expected a callback table");
    get_field(L, -1, "_callback");
    const std::string builtin = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
    lua_pop(L, 1);
    if (!builtin.empty()) {
      get_field(L, -1, "_options");
      const json options = to_json(L, -1, builtin);
      lua_pop(L, 1);
      auto made = train::make_callback(builtin, options);
      if (!made) throw UsageError("callback '" + builtin + "' is not one that C++ runs");
      out.push_back(std::move(made));
    } else {
      get_field(L, -1, "name");
      const std::string name = lua_isstring(L, -1) ? lua_tostring(L, -1) : where;
      lua_pop(L, 1);
      out.push_back(std::make_unique<LuaCallback>(L, lua_gettop(L), name));
    }
    lua_pop(L, 1);
  }
  return out;
}

}  // namespace drun::lua
