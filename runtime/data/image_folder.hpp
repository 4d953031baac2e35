// Image folders as torchvision's ImageFolder and Keras'
// image_dataset_from_directory read them: dir/<class>/**/<image>.{jpg,jpeg,png},
// the classes the sorted names of dir's subfolders, an image's label its
// class's index. Only the list of files is held in memory; each batch's images
// are decoded (data/image_decode.hpp), cropped (data/image_crop.hpp) and
// resized (data/image_resample.hpp) when the pipeline needs them.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/options.hpp"
#include "data/dataset.hpp"

namespace drun::data {

// Every field is set by parse_image_folder_options; the defaults are those of
// data.image_folder's schema (image_folder_reader()).
struct ImageFolderOptions {
  std::string dir;
  int64_t height = 0, width = 0;
  // Training: random-resized-crop (crop_scale, crop_ratio) and, with flip, a
  // left-right flip half of the time. Evaluation: resize + centre crop.
  bool augment = false;
  bool flip = false;
  std::array<double, 2> crop_scale{};
  std::array<double, 2> crop_ratio{};
  double crop_fraction = 0;  // evaluation: the centre crop's share of the resized picture
  int threads = 1;
  uint64_t seed = 0;
};

// Reads dir, size ({h, w} or one number), augment, flip, crop_scale,
// crop_ratio, crop_fraction, threads (0: `default_threads`) and seed from `o`,
// checked against data.image_folder's schema (image_folder_reader() in
// data/reader_registry.hpp, which holds the defaults); finish() is left to
// the caller. Throws UsageError for values out of range.
ImageFolderOptions parse_image_folder_options(Options& o, int default_threads);

// The files and their labels, in class order then path order.
struct ImageList {
  std::vector<std::string> classes;
  std::vector<std::string> files;
  std::vector<int32_t> labels;
};

// Throws UsageError naming the path for a missing dir, one without class
// subfolders, or a class folder without images.
ImageList list_image_folder(const std::string& dir);

// y int32 (N) labels; x left empty: the Dataset's source makes the (height,
// width, 3) float images, 0..255.
Dataset load_image_folder(const ImageFolderOptions& options);

}  // namespace drun::data
