// A data set from nested lists of numbers (a script's data.arrays{x, y}):
// x's nesting gives its shape; labels that are all integers in a flat list
// become int32 class ids, other flat labels a column of targets.
#pragma once
#include "base/options.hpp"
#include "data/dataset.hpp"

namespace drun::data {

// UsageError naming x or y for an empty, ragged or non-numeric list, or
// inputs and labels that do not fit together (check_dataset).
Dataset dataset_from_arrays(const json& x, const json& y);

}  // namespace drun::data
