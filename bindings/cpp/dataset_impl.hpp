// What a drun::Dataset holds: the data, shared and read-only, and the
// pipeline ops the Lua API would have built (data::parse_pipeline_ops).
#pragma once
#include <memory>

#include "drun/dataset.hpp"
#include "train/run_fit.hpp"

namespace drun {

struct Dataset::Impl {
  train::Input input;
};

}  // namespace drun
