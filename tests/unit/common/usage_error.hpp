// Runs f, expecting a UsageError whose message contains every one of `parts`:
// the check every bad-input test makes (what was wrong, and where).
#pragma once
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "base/options.hpp"

namespace drun::testing {

template <class F>
void expect_usage_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no UsageError thrown";
  } catch (const UsageError& e) {
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message '" << e.what() << "' lacks '" << p << "'";
  }
}

}  // namespace drun::testing
