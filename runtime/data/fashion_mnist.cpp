// Finds the Fashion-MNIST files of a split, reads them, and checks that images
// and labels agree, with messages that say how to get the files.
#include "data/fashion_mnist.hpp"

#include <cstdlib>
#include <filesystem>

#include "base/options.hpp"
#include "data/idx_pair.hpp"
#include "data/reader_registry.hpp"

namespace drun::data {
namespace {

// dir/name.gz or dir/name, whichever exists (the .gz first: that is what the
// Debian package ships).
std::string find_file(const std::string& dir, const std::string& name) {
  std::filesystem::path base = std::filesystem::path(dir) / name;
  for (std::string candidate : {base.string() + ".gz", base.string()})
    if (std::filesystem::is_regular_file(candidate)) return candidate;
  throw UsageError("Fashion-MNIST: " + base.string() + ".gz not found (nor " + base.string() +
                   "). The Debian package `dataset-fashion-mnist` installs it in " +
                   kFashionMnistDir +
                   " (apt install dataset-fashion-mnist); to read the files from elsewhere, "
                   "point --data-dir or DRUN_DATA_DIR at their folder.");
}

}  // namespace

std::string fashion_mnist_dir(const std::string& dir) {
  if (!dir.empty()) return dir;
  const char* env = std::getenv("DRUN_DATA_DIR");
  if (env && *env) return env;
  return kFashionMnistDir;
}

Dataset load_fashion_mnist(const std::string& split, const std::string& dir) {
  std::string prefix;
  if (split == "train")
    prefix = "train";
  else if (split == "test")
    prefix = "t10k";
  else
    throw UsageError("Fashion-MNIST: unknown split '" + split + "'; valid splits: train, test");
  std::string folder = fashion_mnist_dir(dir);
  std::string images_path = find_file(folder, prefix + "-images-idx3-ubyte");
  std::string labels_path = find_file(folder, prefix + "-labels-idx1-ubyte");

  Dataset d = load_idx_pair(images_path, labels_path, "Fashion-MNIST");
  const int32_t* y = d.y.i32();
  for (int64_t i = 0; i < d.y.dim(0); ++i)
    if (y[i] >= kFashionMnistClasses)
      throw UsageError("Fashion-MNIST: " + labels_path + ": label " + std::to_string(y[i]) +
                       " of example " + std::to_string(i) + " is outside 0..9");
  return d;
}

}  // namespace drun::data

namespace drun::data {

const ReaderInfo& fashion_mnist_reader() {
  static const ReaderInfo info{
      .about = {.names = {"fashion_mnist"},
                .doc = "Fashion-MNIST (Debian's dataset-fashion-mnist, or dir), (28, 28, 1) images",
                .schema = {{"split", OptionType::string, "train", "'train' or 'test'"},
                           {"dir", OptionType::string, nullptr,
                            "where the files are (default: --data-dir or the Debian path)"},
                           {"scale", OptionType::boolean, true, "pixels to [0, 1]"}}},
      .open =
          [](Options& o, const ReaderEnv& env) {
            return load_fashion_mnist(o.get<std::string>("split"),
                                      o.maybe<std::string>("dir").value_or(env.data_dir));
          },
      .pixel_scale = 1.0 / 255};
  return info;
}

}  // namespace drun::data
