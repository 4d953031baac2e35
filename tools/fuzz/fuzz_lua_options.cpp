// Lua option tables to JSON (bindings/lua/lua_json.cpp), the path every
// option of every Lua call takes into C++. The input is a small program that
// builds a value through Lua's C API, so that every shape of table comes
// within reach (sparse, nested, number keys of any value, a table holding
// itself, functions and userdata) without running Lua code.
#include <cstring>
#include <lua.hpp>
#include <memory>

#include "fuzz_input.hpp"
#include "lua_json.hpp"

namespace {

int noop(lua_State*) {
  return 0;
}

// Each byte an operation, some taking the next bytes as an argument.
void build(lua_State* L, const uint8_t* data, size_t size) {
  lua_newtable(L);  // the root, at index 1
  for (size_t i = 0; i < size && lua_gettop(L) < 200; ++i) {
    const uint8_t op = data[i] % 12;
    const auto next = [&]() -> uint8_t { return i + 1 < size ? data[++i] : 0; };
    switch (op) {
      case 0:
        lua_pushnil(L);
        break;
      case 1:
        lua_pushboolean(L, next() & 1);
        break;
      case 2:
        lua_pushnumber(L, static_cast<int8_t>(next()));
        break;
      case 3: {  // any double, NaN and infinities included
        double v = 0;
        uint8_t bytes[sizeof v];
        for (auto& b : bytes) b = next();
        std::memcpy(&v, bytes, sizeof v);
        lua_pushnumber(L, v);
        break;
      }
      case 4: {
        const size_t n = next() % 16;
        const size_t start = std::min(i + 1, size);
        const size_t len = std::min(n, size - start);
        lua_pushlstring(L, reinterpret_cast<const char*>(data + start), len);
        i += len;
        break;
      }
      case 5:
        lua_newtable(L);
        break;
      case 6:  // t[k] = v for the table below the top two
        if (lua_gettop(L) >= 3 && lua_istable(L, -3) && !lua_isnil(L, -2)) {
          const double k = lua_isnumber(L, -2) ? lua_tonumber(L, -2) : 0;
          if (lua_isnumber(L, -2) && k != k) {  // NaN cannot be a key
            lua_pop(L, 2);
            break;
          }
          lua_settable(L, -3);
        }
        break;
      case 7:  // append the top to the table below it
        if (lua_gettop(L) >= 2 && lua_istable(L, -2))
          lua_rawseti(L, -2, static_cast<int>(lua_objlen(L, -2) + 1));
        break;
      case 8:  // a reference to a table already built (cycles)
        lua_pushvalue(L, 1 + next() % lua_gettop(L));
        break;
      case 9:
        lua_pushcfunction(L, noop);
        break;
      case 10:
        lua_newuserdata(L, 1);
        break;
      case 11:
        if (lua_gettop(L) > 1) lua_pop(L, 1);
        break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::unique_ptr<lua_State, decltype(&lua_close)> state(luaL_newstate(), lua_close);
  lua_State* L = state.get();
  build(L, data, size);
  // The root as the options of a call, and the top as a lone value.
  drun::fuzz::expect_clean([&] { drun::lua::to_json(L, 1).dump(); });
  drun::fuzz::expect_clean([&] { drun::lua::to_json(L, -1, "top").dump(); });
  return 0;
}
