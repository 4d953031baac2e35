// Checkpoint restore: the input is the newest checkpoint of a model_dir
// (ckpt-2.h5) for a small model with Adam's slots; restore skips an unreadable
// one, and a readable one of another shape is a UsageError.
#include "fuzz_input.hpp"
#include "optim/optimizer.hpp"
#include "train/checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const drun::json spec = drun::json::parse(R"({"name": "mlp", "input_shape": [4],
    "layers": [{"class_name": "Dense", "config": {"units": 3}},
               {"class_name": "BatchNormalization", "config": {}},
               {"class_name": "Dropout", "config": {"rate": 0.5}},
               {"class_name": "Dense", "config": {"units": 2}}]})");
  const auto dir = drun::fuzz::scratch_dir() / "model_dir";
  std::filesystem::create_directories(dir);
  drun::fuzz::as_file("model_dir/ckpt-2.h5", data, size);
  drun::nn::Model model(spec, 1);
  auto optimizer = drun::optim::make_optimizer(drun::json("adam"));
  drun::train::Checkpoints checkpoints(dir.string(), 3);
  drun::fuzz::expect_clean(
      [&] { checkpoints.restore(model, *optimizer, [](const std::string&) {}); });
  drun::fuzz::expect_clean([&] { checkpoints.load(2, model, *optimizer); });
  return 0;
}
