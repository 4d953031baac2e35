#include "data/reader_registry.hpp"

namespace drun::data {

const std::vector<const ReaderInfo*>& reader_registry() {
  static const std::vector<const ReaderInfo*> entries = {
#define DRUN_READER(id) &id##_reader(),
#include "data/reader_list.hpp"
#undef DRUN_READER
  };
  return entries;
}

const ReaderInfo& reader_named(const std::string& name) {
  return entry_named(reader_registry(), name, "data reader");
}

json describe_readers() {
  json out = json::array();
  for (const ReaderInfo* info : reader_registry()) {
    json entry = info->about.describe();
    entry["pixel_scale"] = info->pixel_scale;
    out.push_back(std::move(entry));
  }
  return out;
}

void check_reader_options(const std::string& name, const json& options, const std::string& owner) {
  Options(options, owner, reader_named(name).about.schema);
}

Dataset open_reader(const std::string& name, const json& options, const std::string& owner,
                    const ReaderEnv& env) {
  const ReaderInfo& info = reader_named(name);
  Options o(options, owner, info.about.schema);
  Dataset d = info.open(o, env);
  o.finish();
  return d;
}

}  // namespace drun::data
