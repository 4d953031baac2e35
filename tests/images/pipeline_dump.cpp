// Runs an image folder through a pipeline and writes what it delivers, for
// image_folder_test.py to check against Pillow:
//   pipeline_dump OPTIONS_JSON OPS_JSON EPOCH OUT
// OPTIONS_JSON: data.image_folder's options (less scale); OPS_JSON: the
// pipeline's op list. Writes OUT.x (float32, every batch of the epoch in
// order) and OUT.y (int32), and prints {"shape": [N, H, W, 3], "batches": B}.
// A UsageError goes to stderr with exit code 1, as drun reports it.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/options.hpp"
#include "data/image_folder.hpp"
#include "data/pipeline.hpp"
#include "data/reader_registry.hpp"

using drun::UsageError;
namespace data = drun::data;

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: pipeline_dump OPTIONS_JSON OPS_JSON EPOCH OUT\n";
    return 2;
  }
  try {
    drun::Options o(nlohmann::json::parse(argv[1]), "data.image_folder",
                    data::image_folder_reader().about.schema);
    const auto options = data::parse_image_folder_options(o, 1);
    o.finish();
    auto ds = std::make_shared<const data::Dataset>(data::load_image_folder(options));
    data::Pipeline pipeline(ds, data::parse_pipeline_ops(nlohmann::json::parse(argv[2])));
    pipeline.start_epoch(std::stoll(argv[3]));
    std::ofstream xs(std::string(argv[4]) + ".x", std::ios::binary);
    std::ofstream ys(std::string(argv[4]) + ".y", std::ios::binary);
    data::Batch batch;
    int64_t examples = 0, batches = 0;
    while (pipeline.next(batch)) {
      xs.write(static_cast<const char*>(batch.x.raw()),
               static_cast<std::streamsize>(batch.x.bytes()));
      ys.write(static_cast<const char*>(batch.y.raw()),
               static_cast<std::streamsize>(batch.y.bytes()));
      examples += batch.size;
      ++batches;
    }
    const auto shape = ds->example_shape().with_batch(examples);
    nlohmann::json out{{"shape", nlohmann::json::array()}, {"batches", batches}};
    for (int i = 0; i < shape.rank(); ++i) out["shape"].push_back(shape[i]);
    std::cout << out.dump() << "\n";
    return 0;
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
