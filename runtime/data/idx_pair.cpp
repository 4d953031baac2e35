#include "data/idx_pair.hpp"

#include "base/options.hpp"
#include "data/idx.hpp"
#include "data/reader_registry.hpp"

namespace drun::data {

Dataset load_idx_pair(const std::string& images, const std::string& labels,
                      const std::string& what) {
  Dataset d;
  d.x = read_idx_images(images);
  d.y = read_idx_labels(labels);
  if (d.x.dim(0) != d.y.dim(0))
    throw UsageError(what + ": " + images + " holds " + std::to_string(d.x.dim(0)) +
                     " images but " + labels + " holds " + std::to_string(d.y.dim(0)) + " labels");
  d.y = labels_or_targets(d.y, what + ": " + labels);
  return d;
}

}  // namespace drun::data

namespace drun::data {

const ReaderInfo& idx_reader() {
  static const ReaderInfo info{
      .about = {.names = {"idx"},
                .doc = "any pair of idx files (MNIST's format, gzipped or raw), raw values",
                .schema = {{"images", OptionType::string, kRequired, "the images' file"},
                           {"labels", OptionType::string, kRequired,
                            "the labels' file: one class id (>= 0) per image"}}},
      .open = [](Options& o, const ReaderEnv&) {
        return load_idx_pair(o.get<std::string>("images"), o.get<std::string>("labels"), o.owner());
      }};
  return info;
}

}  // namespace drun::data
