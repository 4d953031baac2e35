#include "lua_json.hpp"

#include <cmath>

namespace drun::lua {

namespace {
std::string key_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
}  // namespace

json to_json(lua_State* L, int index, const std::string& path) {
  index = index < 0 ? lua_gettop(L) + index + 1 : index;
  switch (lua_type(L, index)) {
    case LUA_TNIL:
      return nullptr;
    case LUA_TBOOLEAN:
      return static_cast<bool>(lua_toboolean(L, index));
    case LUA_TNUMBER: {
      const double v = lua_tonumber(L, index);
      if (std::floor(v) == v && std::fabs(v) < 9.0e15) return static_cast<int64_t>(v);
      return v;
    }
    case LUA_TSTRING:
      return std::string(lua_tostring(L, index));
    case LUA_TTABLE: {
      const size_t n = lua_objlen(L, index);
      size_t count = 0;
      bool array = true;
      lua_pushnil(L);
      while (lua_next(L, index)) {
        ++count;
        if (lua_type(L, -2) != LUA_TNUMBER) array = false;
        lua_pop(L, 1);
      }
      array = array && count == n && n > 0;
      json out = array ? json::array() : json::object();
      if (array) {
        for (size_t i = 1; i <= n; ++i) {
          lua_rawgeti(L, index, static_cast<int>(i));
          out.push_back(to_json(L, -1, path + "[" + std::to_string(i) + "]"));
          lua_pop(L, 1);
        }
        return out;
      }
      lua_pushnil(L);
      while (lua_next(L, index)) {
        std::string key;
        if (lua_type(L, -2) == LUA_TSTRING) {
          key = lua_tostring(L, -2);
        } else if (lua_type(L, -2) == LUA_TNUMBER) {
          key = std::to_string(static_cast<int64_t>(lua_tonumber(L, -2)));
        } else {
          lua_pop(L, 2);
          throw UsageError("option table '" + path + "' has a key that is not a string");
        }
        // Keys starting with '_' are the Lua side's own bookkeeping.
        if (!key.empty() && key[0] != '_') out[key] = to_json(L, -1, key_path(path, key));
        lua_pop(L, 1);
      }
      return out;
    }
    default:
      throw UsageError("option '" + path + "' is a " + lua_typename(L, lua_type(L, index)) +
                       ", which cannot be an option value");
  }
}

void push_json(lua_State* L, const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      lua_pushnil(L);
      return;
    case json::value_t::boolean:
      lua_pushboolean(L, v.get<bool>());
      return;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      lua_pushnumber(L, v.get<double>());
      return;
    case json::value_t::string:
      lua_pushstring(L, v.get_ref<const std::string&>().c_str());
      return;
    case json::value_t::array: {
      lua_createtable(L, static_cast<int>(v.size()), 0);
      int i = 1;
      for (const auto& e : v) {
        push_json(L, e);
        lua_rawseti(L, -2, i++);
      }
      return;
    }
    case json::value_t::object: {
      lua_createtable(L, 0, static_cast<int>(v.size()));
      for (auto it = v.begin(); it != v.end(); ++it) {
        push_json(L, it.value());
        lua_setfield(L, -2, it.key().c_str());
      }
      return;
    }
    default:
      lua_pushnil(L);
  }
}

}  // namespace drun::lua
