// Listing an image folder, and the ExampleSource that decodes its images: per
// example, read the file, choose the box (random-resized-crop or centre
// crop) from the picture's size, decode only what the box needs, resize.
#include "data/image_folder.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include "base/rng.hpp"
#include "data/example_source.hpp"
#include "data/image_crop.hpp"
#include "data/image_decode.hpp"
#include "data/image_resample.hpp"
#include "data/reader_registry.hpp"

namespace drun::data {

namespace fs = std::filesystem;

namespace {

const char* const kOwner = "data.image_folder";

bool is_image_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

bool hidden(const fs::path& p) {
  return p.filename().string().starts_with(".");
}

std::vector<std::string> images_under(const fs::path& class_dir) {
  std::vector<std::string> files;
  const auto walk = fs::directory_options::follow_directory_symlink;
  for (auto it = fs::recursive_directory_iterator(class_dir, walk);
       it != fs::recursive_directory_iterator(); ++it) {
    if (hidden(it->path())) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && is_image_name(it->path())) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::array<double, 2> pair_option(Options& o, const std::string& key) {
  const json& v = o.value(key);
  if (!(v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number()))
    throw UsageError(std::string(kOwner) + ": " + key + " must be {lo, hi} with 0 < lo <= hi");
  const double lo = v[0].get<double>(), hi = v[1].get<double>();
  if (!(lo > 0) || !(lo <= hi))
    throw UsageError(std::string(kOwner) + ": " + key + " must be {lo, hi} with 0 < lo <= hi");
  return {lo, hi};
}

class ImageFolderSource final : public ExampleSource {
 public:
  ImageFolderSource(ImageFolderOptions options, std::vector<std::string> files)
      : o_(std::move(options)), files_(std::move(files)) {}

  int64_t size() const override { return static_cast<int64_t>(files_.size()); }
  Shape example_shape() const override { return Shape{o_.height, o_.width, 3}; }
  int threads() const override { return o_.threads; }
  void make(int64_t index, uint64_t draw, float* dst) const override;

 private:
  DecodePlan plan(const Box& box, int64_t width, int64_t height) const;

  ImageFolderOptions o_;
  std::vector<std::string> files_;
};

// The largest JPEG scale-down that leaves the box at least the output's size,
// and the pixels the resize reads: the box itself when augmenting (torchvision
// crops, then resizes), else the box and the filter's reach around it.
DecodePlan ImageFolderSource::plan(const Box& box, int64_t width, int64_t height) const {
  DecodePlan p;
  for (int s : {8, 4, 2}) {
    if (box.width() / s >= static_cast<double>(o_.width) &&
        box.height() / s >= static_cast<double>(o_.height)) {
      p.shrink = s;
      break;
    }
  }
  const double mx = o_.augment ? 0.0 : resample_support(box.width(), o_.width) + 1.0;
  const double my = o_.augment ? 0.0 : resample_support(box.height(), o_.height) + 1.0;
  p.need.x0 = std::max<int64_t>(0, static_cast<int64_t>(std::floor(box.x0 - mx)));
  p.need.y0 = std::max<int64_t>(0, static_cast<int64_t>(std::floor(box.y0 - my)));
  p.need.x1 = std::min<int64_t>(width, static_cast<int64_t>(std::ceil(box.x1 + mx)));
  p.need.y1 = std::min<int64_t>(height, static_cast<int64_t>(std::ceil(box.y1 + my)));
  return p;
}

void ImageFolderSource::make(int64_t index, uint64_t draw, float* dst) const {
  const std::string& path = files_.at(static_cast<size_t>(index));
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  Rng rng(mix_bits(draw ^ mix_bits(o_.seed)));
  Box box;
  bool flip = false;
  const DecodedRegion r = decode_image(bytes, path, [&](int64_t width, int64_t height) {
    if (width < 1 || height < 1) throw UsageError(path + ": image has no pixels");
    box = o_.augment ? random_resized_crop(width, height, rng, o_.crop_scale, o_.crop_ratio)
                     : centre_crop(width, height, o_.height, o_.width, o_.crop_fraction);
    flip = o_.augment && o_.flip && (rng.next() >> 63) != 0;
    return plan(box, width, height);
  });
  // The box in the decoded region's pixels.
  const double s = r.shrink;
  Box b{box.x0 / s - static_cast<double>(r.x0), box.y0 / s - static_cast<double>(r.y0),
        box.x1 / s - static_cast<double>(r.x0), box.y1 / s - static_cast<double>(r.y0)};
  RgbView view{r.image.pixels.data(), r.image.width, r.image.height, r.image.width * 3};
  if (o_.augment) {
    // A crop's resize reads nothing outside it (JPEG may have decoded more).
    const auto x0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(b.x0)), 0, view.width);
    const auto y0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(b.y0)), 0, view.height);
    const auto x1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(b.x1)), x0, view.width);
    const auto y1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(b.y1)), y0, view.height);
    view.pixels += y0 * view.stride + x0 * 3;
    view.width = x1 - x0;
    view.height = y1 - y0;
    b = Box{b.x0 - static_cast<double>(x0), b.y0 - static_cast<double>(y0),
            b.x1 - static_cast<double>(x0), b.y1 - static_cast<double>(y0)};
  }
  resample_bilinear(view, b, o_.height, o_.width, flip, dst);
}

}  // namespace

ImageFolderOptions parse_image_folder_options(Options& o, int default_threads) {
  ImageFolderOptions r;
  r.dir = o.get<std::string>("dir");
  const json& size = o.value("size");
  const auto bad_size = [&] {
    return UsageError(std::string(kOwner) + ": size must be {height, width} or one number, got " +
                      size.dump());
  };
  if (size.is_array() && size.size() == 2) {
    r.height = size[0].get<int64_t>();
    r.width = size[1].get<int64_t>();
  } else if (size.is_number()) {
    r.height = r.width = size.get<int64_t>();
  } else {
    throw bad_size();
  }
  if (r.height < 1 || r.width < 1) throw bad_size();
  r.augment = o.get<bool>("augment");
  r.flip = o.get<bool>("flip");
  r.crop_scale = pair_option(o, "crop_scale");
  if (r.crop_scale[1] > 1.0)
    throw UsageError(std::string(kOwner) + ": crop_scale's fractions must be <= 1");
  r.crop_ratio = pair_option(o, "crop_ratio");
  r.crop_fraction = o.get<double>("crop_fraction");
  if (!(r.crop_fraction > 0 && r.crop_fraction <= 1))
    throw UsageError(std::string(kOwner) + ": crop_fraction must be in (0, 1]");
  r.threads = static_cast<int>(o.get<int64_t>("threads"));
  if (r.threads < 0) throw UsageError(std::string(kOwner) + ": threads must be >= 0");
  if (r.threads == 0) r.threads = std::max(1, default_threads);
  r.seed = o.get<uint64_t>("seed");
  return r;
}

ImageList list_image_folder(const std::string& dir) {
  const std::string what = std::string(kOwner) + ": ";
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw UsageError(what + "dir '" + dir + "' does not exist");
  if (!fs::is_directory(dir, ec)) throw UsageError(what + "'" + dir + "' is not a directory");
  ImageList list;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_directory() && !hidden(entry.path()))
      list.classes.push_back(entry.path().filename().string());
  }
  std::sort(list.classes.begin(), list.classes.end());
  if (list.classes.empty())
    throw UsageError(what + "'" + dir + "' has no class folders (expected " + dir +
                     "/<class>/<image>.jpg, one folder per class)");
  for (size_t c = 0; c < list.classes.size(); ++c) {
    const fs::path class_dir = fs::path(dir) / list.classes[c];
    std::vector<std::string> files = images_under(class_dir);
    if (files.empty())
      throw UsageError(what + "class folder '" + class_dir.string() +
                       "' has no .jpg, .jpeg or .png images");
    list.labels.insert(list.labels.end(), files.size(), static_cast<int32_t>(c));
    std::move(files.begin(), files.end(), std::back_inserter(list.files));
  }
  return list;
}

Dataset load_image_folder(const ImageFolderOptions& options) {
  ImageList list = list_image_folder(options.dir);
  Dataset ds;
  const auto n = static_cast<int64_t>(list.files.size());
  ds.y = Tensor(Shape{n}, DType::i32);
  std::copy(list.labels.begin(), list.labels.end(), ds.y.i32());
  ds.source = std::make_shared<const ImageFolderSource>(options, std::move(list.files));
  return ds;
}

}  // namespace drun::data

namespace drun::data {

const ReaderInfo& image_folder_reader() {
  static const ReaderInfo info{
      .about = {.names = {"image_folder"},
                .doc = "class-per-subfolder JPEG and PNG images, decoded per batch",
                .schema = {{"dir", OptionType::string, kRequired, "the folder of class folders"},
                           {"size", OptionType::pair, json::array({224, 224}),
                            "the examples' size: {height, width} or one number"},
                           {"augment", OptionType::boolean, false,
                            "random-resized-crop and flip (training) instead of resize + centre "
                            "crop"},
                           {"flip", OptionType::boolean, true,
                            "with augment: flip left-right half of the time"},
                           {"crop_scale", OptionType::list, json::array({0.08, 1.0}),
                            "with augment: the crop's share of the picture's area, {lo, hi}"},
                           {"crop_ratio", OptionType::list, json::array({3.0 / 4.0, 4.0 / 3.0}),
                            "with augment: the crop's aspect ratio (width / height), {lo, hi}"},
                           {"crop_fraction", OptionType::number, 0.875,
                            "without augment: the centre crop's share of the resized picture"},
                           {"threads", OptionType::integer, 0,
                            "decoding threads (0: the rank's threads)"},
                           {"seed", OptionType::integer, 0, "the crops' and flips' seed"},
                           {"scale", OptionType::boolean, true,
                            "pixels to [0, 1] (false: 0..255)"}}},
      .open =
          [](Options& o, const ReaderEnv& env) {
            return load_image_folder(parse_image_folder_options(o, env.threads));
          },
      .pixel_scale = 1.0 / 255};
  return info;
}

}  // namespace drun::data
