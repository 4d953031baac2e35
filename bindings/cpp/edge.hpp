// The edge of libdrun's public API: values of the public types to the
// runtime's JSON options, and every exception the runtime throws to
// drun::Error, so that a user of the library catches one type. Like the Lua
// bindings, this layer converts and decides nothing: the runtime checks
// every option.
#pragma once
#include <exception>
#include <string>

#include "base/options.hpp"
#include "drun/config.hpp"
#include "drun/error.hpp"
#include "train/preemption.hpp"

namespace drun::api {

// {"key": value, ...}; drun::Error for a key given twice.
json to_json(const Config& config, const std::string& what);
// {"class_name": ..., "config": {...}}, as Keras describes layers and optimizers.
json described(const std::string& class_name, const Config& config, const std::string& what);

// Runs f; any exception other than drun::Error leaves as a drun::Error with
// its message (a preempted fit as a drun::Preempted with its exit code).
template <class F>
auto at_edge(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const train::Preempted& e) {
    throw Preempted(e.what(), e.exit_code());
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
}

}  // namespace drun::api
