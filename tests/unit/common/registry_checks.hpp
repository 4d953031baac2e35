// What every registry's test checks of its entries (base/registry.hpp): a
// description, names no other entry takes, and each option described once.
#pragma once
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "base/registry.hpp"

namespace drun::testing {

inline void expect_schema_documented(const Schema& schema) {
  std::set<std::string> seen;
  for (const OptionSpec& o : schema.options) {
    EXPECT_FALSE(o.doc.empty()) << o.name;
    EXPECT_TRUE(seen.insert(o.name).second) << o.name << " listed twice";
  }
}

template <class Entry>
void expect_registry_documented(const std::vector<const Entry*>& registry) {
  std::set<std::string> names;
  ASSERT_FALSE(registry.empty());
  for (const Entry* info : registry) {
    const Described& d = info->about;
    SCOPED_TRACE(d.name());
    EXPECT_FALSE(d.doc.empty());
    for (const auto& n : d.names) EXPECT_TRUE(names.insert(n).second) << n << " registered twice";
    expect_schema_documented(d.schema);
  }
}

}  // namespace drun::testing
