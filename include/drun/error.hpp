// drun's public C++ API (libdrun): the one exception type it throws. Its
// message says what was wrong (a bad option, a missing file, a shape that
// does not fit), as drun's command line would.
#pragma once
#include <stdexcept>
#include <string>

namespace drun {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace drun
