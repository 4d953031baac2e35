#include "data/cifar10.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "base/options.hpp"
#include "data/reader_registry.hpp"

namespace drun::data {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> file_names(const std::string& split) {
  if (split == "train")
    return {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
            "data_batch_5.bin"};
  if (split == "test") return {"test_batch.bin"};
  throw UsageError("CIFAR-10: unknown split '" + split + "'; valid splits: train, test");
}

// The folder holding the split's files: dir itself or dir/cifar-10-batches-bin.
std::string find_folder(const std::string& dir, const std::string& first_file) {
  std::string base = dir;
  if (base.empty())
    if (const char* env = std::getenv("DRUN_DATA_DIR"); env && *env) base = env;
  if (base.empty())
    throw UsageError(
        "CIFAR-10: no data directory. Download the binary version (cifar-10-binary.tar.gz from "
        "https://www.cs.toronto.edu/~kriz/cifar.html) on a machine with internet access, "
        "extract it, and pass its folder with --data-dir or DRUN_DATA_DIR");
  for (const fs::path& p : {fs::path(base), fs::path(base) / "cifar-10-batches-bin"})
    if (fs::is_regular_file(p / first_file)) return p.string();
  throw UsageError("CIFAR-10: " + (fs::path(base) / first_file).string() + " not found (nor in " +
                   (fs::path(base) / "cifar-10-batches-bin").string() +
                   "). Put the binary version's files there (cifar-10-binary.tar.gz from "
                   "https://www.cs.toronto.edu/~kriz/cifar.html, extracted), or point "
                   "--data-dir or DRUN_DATA_DIR at their folder");
}

struct Span {
  std::string path;
  int64_t records;
};

struct File {
  std::FILE* f;
  explicit File(const std::string& path) : f(std::fopen(path.c_str(), "rb")) {
    if (!f) throw UsageError("CIFAR-10: cannot open " + path);
  }
  ~File() { std::fclose(f); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
};

}  // namespace

Dataset load_cifar10(const std::string& split, const std::string& dir, int64_t shard_count,
                     int64_t shard_index) {
  const auto names = file_names(split);
  const std::string folder = find_folder(dir, names[0]);
  if (shard_count < 1 || shard_index < 0 || shard_index >= shard_count)
    throw UsageError("CIFAR-10: shard " + std::to_string(shard_index) + " of " +
                     std::to_string(shard_count) + " does not exist");
  std::vector<Span> files;
  int64_t total = 0;
  for (const auto& name : names) {
    const std::string path = (fs::path(folder) / name).string();
    if (!fs::is_regular_file(path))
      throw UsageError("CIFAR-10: " + path + " is missing (the " + split + " split needs " +
                       std::to_string(names.size()) + " files)");
    const auto bytes = static_cast<int64_t>(fs::file_size(path));
    if (bytes == 0 || bytes % kCifar10RecordBytes != 0)
      throw UsageError("CIFAR-10: " + path + " has " + std::to_string(bytes) +
                       " bytes, not a whole number of 3,073-byte records (1 label byte + 3,072 "
                       "pixel bytes): truncated or not a CIFAR-10 binary file");
    files.push_back({path, bytes / kCifar10RecordBytes});
    total += files.back().records;
  }
  const int64_t per_shard = total / shard_count;
  const int64_t first = shard_index * per_shard;
  if (per_shard == 0)
    throw UsageError("CIFAR-10: " + std::to_string(total) + " records cannot be shared by " +
                     std::to_string(shard_count) + " workers");

  Dataset d;
  d.x = Tensor(Shape{per_shard, 32, 32, 3}, DType::u8);  // bytes, as stored
  d.y = Tensor(Shape{per_shard}, DType::i32);
  d.sharded = shard_count > 1;
  std::vector<unsigned char> record(static_cast<size_t>(kCifar10RecordBytes));
  int64_t file_start = 0, out = 0;
  for (const auto& span : files) {
    const int64_t lo = std::max(first, file_start);
    const int64_t hi = std::min(first + per_shard, file_start + span.records);
    if (lo < hi) {
      File file(span.path);
      std::fseek(file.f, static_cast<long>((lo - file_start) * kCifar10RecordBytes), SEEK_SET);
      for (int64_t r = lo; r < hi; ++r, ++out) {
        if (std::fread(record.data(), 1, record.size(), file.f) != record.size())
          throw UsageError("CIFAR-10: " + span.path + " ends inside record " +
                           std::to_string(r - file_start));
        if (record[0] >= kCifar10Classes)
          throw UsageError("CIFAR-10: " + span.path + ": record " + std::to_string(r - file_start) +
                           " has label " + std::to_string(record[0]) +
                           ", outside 0..9: not a CIFAR-10 file (CIFAR-100 records have 2 "
                           "label bytes)");
        d.y.i32()[out] = record[0];
        uint8_t* x = d.x.u8() + out * 3072;
        // Channel-major planes in the file, channels last in the tensor.
        for (int p = 0; p < 1024; ++p)
          for (int c = 0; c < 3; ++c) x[p * 3 + c] = record[static_cast<size_t>(1 + c * 1024 + p)];
      }
    }
    file_start += span.records;
  }
  return d;
}

}  // namespace drun::data

namespace drun::data {

const ReaderInfo& cifar10_reader() {
  static const ReaderInfo info{
      .about = {.names = {"cifar10"},
                .doc = "CIFAR-10's binary files, (32, 32, 3) images, pixels 0..255",
                .schema = {{"split", OptionType::string, "train", "'train' or 'test'"},
                           {"dir", OptionType::string, nullptr,
                            "where the files are (default: --data-dir or DRUN_DATA_DIR)"},
                           {"shard", OptionType::boolean, false,
                            "in a multi-worker job, load only this worker's part"}}},
      .open = [](Options& o, const ReaderEnv& env) {
        const bool shard = o.get<bool>("shard");
        return load_cifar10(o.get<std::string>("split"),
                            o.maybe<std::string>("dir").value_or(env.data_dir),
                            shard ? env.worker_count : 1, shard ? env.worker_rank : 0);
      }};
  return info;
}

}  // namespace drun::data
