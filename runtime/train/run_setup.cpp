#include "train/run_setup.hpp"

#include <filesystem>
#include <fstream>

#include "io/atomic_file.hpp"

namespace drun::train {

json RunSetup::to_json() const {
  return {{"workers", workers}, {"strategy", strategy}, {"batch_size", batch_size}};
}

void record_setup(const std::string& dir, const RunSetup& setup) {
  std::filesystem::create_directories(dir);
  io::write_json_atomically(dir + "/setup.json", setup.to_json());
}

void check_setup(const std::string& dir, const RunSetup& setup) {
  std::ifstream in(dir + "/setup.json");
  const json was = in ? json::parse(in, nullptr, false) : json();
  if (!was.is_object()) return;
  const json now = setup.to_json();
  std::string differs;
  auto compare = [&](const char* key, const char* flag) {
    if (!was.contains(key) || was[key] == now[key]) return;
    differs += std::string(differs.empty() ? "" : ", ") + key + " " + was[key].dump() + " there, " +
               now[key].dump() + " now (" + flag + ")";
  };
  compare("workers", "-np");
  if (setup.workers > 1 || was.value("workers", 1) > 1) compare("strategy", "--strategy");
  if (setup.batch_size > 0) compare("batch_size", "--batch-size");
  if (!differs.empty())
    throw UsageError("model_dir " + dir + " holds a run of another setup: " + differs +
                     "; rerun it as it was to continue, or give --model-dir DIR for a new run");
}

}  // namespace drun::train
