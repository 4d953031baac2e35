// The data reader registry: one ReaderInfo per reader, listed in
// data/reader_list.hpp. An entry holds what drun.data.NAME{...} takes (its
// option schema) and how the reader opens a data set from checked options.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/registry.hpp"
#include "data/dataset.hpp"

namespace drun::data {

// What a reader may need of the process besides its options.
struct ReaderEnv {
  std::string data_dir;  // --data-dir / DRUN_DATA_DIR; empty: each reader's default
  int threads = 1;       // the rank's thread budget (image decoding)
  // This worker among the job's workers (CIFAR-10's shard = true reads only its part).
  int64_t worker_count = 1;
  int64_t worker_rank = 0;
};

struct ReaderInfo {
  Described about;  // names: drun.data.NAME; the options drun.data.NAME{...} takes
  // Opens the data set from the options, checked against about.schema. A
  // UsageError names the option or the file at fault.
  using Open = std::function<Dataset(Options&, const ReaderEnv&)>;
  Open open;
  // Non-zero: the reader's values are pixels (0..255) that drun.data.NAME
  // multiplies by this (1/255: to [0, 1]) unless its boolean `scale` option
  // (in the schema, true by default) says not to; the Lua side adds the
  // scale op, as ds:scale does. The reader itself reads raw values.
  double pixel_scale = 0;
};

#define DRUN_READER(id) const ReaderInfo& id##_reader();
#include "data/reader_list.hpp"
#undef DRUN_READER

// Every reader, in the list's order.
const std::vector<const ReaderInfo*>& reader_registry();
// The reader called `name`, else a UsageError "unknown data reader 'name'; valid: ...".
const ReaderInfo& reader_named(const std::string& name);
// Each entry's description ({names, doc, options, positional}) with its pixel_scale.
json describe_readers();
// `options` checked against the reader's schema; `owner` names it in messages
// (e.g. "data.csv"). Throws UsageError for an unknown reader or option, a
// value of the wrong type or a missing required one. Reads no file.
void check_reader_options(const std::string& name, const json& options, const std::string& owner);
// Checks `options` as above, then opens the data set.
Dataset open_reader(const std::string& name, const json& options, const std::string& owner,
                    const ReaderEnv& env);

}  // namespace drun::data
