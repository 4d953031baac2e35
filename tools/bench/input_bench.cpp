// Images per second of data.image_folder's training input: decode, random
// resized crop to SIZE, flip, batch (tools/bench/input.sh runs it beside
// PyTorch's DataLoader). Times the epochs after the first batch of each, so
// thread start-up is left out as it is on the PyTorch side.
//   input_bench DIR THREADS [--batch 64] [--size 224] [--epochs 1]
// Prints one JSON line: {"threads", "batch", "images", "seconds", "images_per_sec"}.
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/options.hpp"
#include "data/image_folder.hpp"
#include "data/pipeline.hpp"
#include "data/reader_registry.hpp"

namespace data = drun::data;
using json = nlohmann::json;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: input_bench DIR THREADS [--batch 64] [--size 224] [--epochs 1]\n";
    return 2;
  }
  int64_t batch = 64, size = 224, epochs = 1;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int64_t v = std::stoll(argv[i + 1]);
    if (flag == "--batch")
      batch = v;
    else if (flag == "--size")
      size = v;
    else if (flag == "--epochs")
      epochs = v;
    else {
      std::cerr << "input_bench: unknown flag " << flag << "\n";
      return 2;
    }
  }
  try {
    const int threads = std::stoi(argv[2]);
    drun::Options o(json{{"dir", argv[1]}, {"size", size}, {"augment", true}, {"threads", threads}},
                    "data.image_folder", data::image_folder_reader().about.schema);
    const auto options = data::parse_image_folder_options(o, 1);
    auto ds = std::make_shared<const data::Dataset>(data::load_image_folder(options));
    const json ops = json::array({{{"op", "shuffle"}, {"seed", 1}},
                                  {{"op", "scale"}, {"factor", 1.0 / 255}},
                                  {{"op", "batch"}, {"size", batch}},
                                  {{"op", "prefetch"}, {"depth", 2}}});
    data::Pipeline pipeline(ds, data::parse_pipeline_ops(ops));
    data::Batch b;
    double seconds = 0;
    int64_t images = 0;
    for (int64_t e = 0; e < epochs; ++e) {
      pipeline.start_epoch(e);
      if (!pipeline.next(b)) break;
      const auto start = std::chrono::steady_clock::now();
      while (pipeline.next(b)) images += b.size;
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::cout << json{{"threads", threads},
                      {"batch", batch},
                      {"images", images},
                      {"seconds", seconds},
                      {"images_per_sec", images / seconds}}
                     .dump()
              << "\n";
    return 0;
  } catch (const drun::UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
