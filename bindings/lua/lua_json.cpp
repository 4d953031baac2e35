#include "lua_json.hpp"

#include <cmath>

namespace drun::lua {

namespace {
std::string key_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// A number key or value as JSON: an integral number within double's exact
// integers becomes an integer; NaN, infinities and huge values stay doubles
// (casting them to an integer is undefined).
bool exact_integer(double v) {
  return std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 9.0e15;
}

std::string number_key(double v) {
  if (exact_integer(v)) return std::to_string(static_cast<int64_t>(v));
  return json(v).dump();
}

// JSON text is UTF-8: a string that is not would make every later dump()
// (summary.json, a model's config) throw far from the option that brought it.
bool valid_utf8(const char* s, size_t n) {
  for (size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80           ? 1
                       : (c >> 5) == 0x6  ? 2
                       : (c >> 4) == 0xE  ? 3
                       : (c >> 3) == 0x1E ? 4
                                          : 0;
    if (len == 0 || i + len > n) return false;
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and code points beyond Unicode's range.
    const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

std::string utf8_string(const char* s, size_t n, const std::string& what) {
  if (!valid_utf8(s, n)) throw UsageError(what + " is not valid UTF-8 text");
  return std::string(s, n);
}

// Options nest a few levels; a table that contains itself would recurse
// without end.
constexpr int kMaxDepth = 64;

json to_json_at(lua_State* L, int index, const std::string& path, int depth);
}  // namespace

json to_json(lua_State* L, int index, const std::string& path) {
  return to_json_at(L, index, path, 0);
}

namespace {
json to_json_at(lua_State* L, int index, const std::string& path, int depth) {
  index = index < 0 ? lua_gettop(L) + index + 1 : index;
  switch (lua_type(L, index)) {
    case LUA_TNIL:
      return nullptr;
    case LUA_TBOOLEAN:
      return static_cast<bool>(lua_toboolean(L, index));
    case LUA_TNUMBER: {
      const double v = lua_tonumber(L, index);
      if (exact_integer(v)) return static_cast<int64_t>(v);
      return v;
    }
    case LUA_TSTRING: {
      size_t length = 0;
      const char* text = lua_tolstring(L, index, &length);
      return utf8_string(text, length, "option '" + path + "'");
    }
    case LUA_TTABLE: {
      if (depth >= kMaxDepth)
        throw UsageError("option '" + path + "' nests tables more than " +
                         std::to_string(kMaxDepth) + " deep (a table that contains itself?)");
      // Each level holds a key and a value on the stack, beyond the
      // LUA_MINSTACK slots a C function is given.
      if (!lua_checkstack(L, 4)) throw UsageError("option '" + path + "' is too deep");
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
          out.push_back(to_json_at(L, -1, path + "[" + std::to_string(i) + "]", depth + 1));
          lua_pop(L, 1);
        }
        return out;
      }
      lua_pushnil(L);
      while (lua_next(L, index)) {
        std::string key;
        if (lua_type(L, -2) == LUA_TSTRING) {
          size_t length = 0;
          const char* text = lua_tolstring(L, -2, &length);
          key = utf8_string(text, length, "a key of option table '" + path + "'");
        } else if (lua_type(L, -2) == LUA_TNUMBER) {
          key = number_key(lua_tonumber(L, -2));
        } else {
          lua_pop(L, 2);
          throw UsageError("option table '" + path + "' has a key that is not a string");
        }
        // Keys starting with '_' are the Lua side's own bookkeeping.
        if (!key.empty() && key[0] != '_')
          out[key] = to_json_at(L, -1, key_path(path, key), depth + 1);
        lua_pop(L, 1);
      }
      return out;
    }
    default:
      throw UsageError("option '" + path + "' is a " + lua_typename(L, lua_type(L, index)) +
                       ", which cannot be an option value");
  }
}
}  // namespace

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
