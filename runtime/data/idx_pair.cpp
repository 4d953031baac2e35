#include "data/idx_pair.hpp"

#include "base/options.hpp"
#include "data/idx.hpp"

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
