// A disk that fills up mid-write, made with RLIMIT_FSIZE: a write
// past the limit fails with EFBIG as on a full file system, with no mount and
// no root, on every platform (ppc64le under qemu-user too). A checkpoint, a
// Keras export and summary.json each fail with an error naming the file and
// leave what was there before: the previous checkpoint loads, the index names
// it, and no partial or temporary file is left.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/atomic_file.hpp"
#include "keras/keras_h5.hpp"
#include "optim/optimizer.hpp"
#include "train/checkpoint.hpp"
#include "usage_error.hpp"

namespace drun {
namespace {

namespace fs = std::filesystem;

// While it lives, no file of this process grows past `bytes`, and a write
// that would gets EFBIG instead of the SIGXFSZ that would kill the process.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = SIG_DFL;
};

class DiskFull : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("drun_disk_full_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

json mlp_spec() {
  return json::parse(R"({"name": "mlp", "input_shape": [16], "layers": [
    {"class_name": "Dense", "config": {"units": 64, "activation": "relu"}},
    {"class_name": "Dense", "config": {"units": 3}}]})");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void fill(nn::Model& model, float value) {
  for (Param* p : model.params()) p->value.fill(value);
}

TEST_F(DiskFull, CheckpointFailsByNameAndThePreviousOneLoads) {
  nn::Model model(mlp_spec(), 1);
  auto optimizer = optim::make_optimizer(json::parse(R"({"class_name": "Adam"})"));
  optimizer->build(model.params());
  train::Checkpoints checkpoints(dir_.string(), 5);
  fill(model, 0.5f);
  checkpoints.save(model, *optimizer, {100, 1, 0});
  const auto size = fs::file_size(checkpoints.path_of(100));
  const std::string index = read_file(path("checkpoint"));
  ASSERT_NE(index.find("ckpt-100.h5"), std::string::npos);

  fill(model, 2.0f);
  {
    const FileSizeLimit limit(size / 2);
    drun::testing::expect_usage_error(
        [&] {
          checkpoints.save(model, *optimizer, {200, 2, 0});
        },
        {checkpoints.path_of(200), "File too large"});
  }
  EXPECT_EQ(files(), (std::vector<std::string>{"checkpoint", "ckpt-100.h5"}));
  EXPECT_EQ(read_file(path("checkpoint")), index);

  nn::Model restored(mlp_spec(), 2);
  auto fresh = optim::make_optimizer(json::parse(R"({"class_name": "Adam"})"));
  const auto state = checkpoints.restore(
      restored, *fresh, [](const std::string& w) { ADD_FAILURE() << "warned: " << w; });
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->global_step, 100);
  for (Param* p : restored.params()) EXPECT_EQ(p->value.f32()[0], 0.5f) << p->name;

  // Space again: the next interval's checkpoint is written and indexed.
  checkpoints.save(model, *optimizer, {300, 3, 0});
  EXPECT_NE(read_file(path("checkpoint")).find("model_checkpoint_path: \"ckpt-300.h5\""),
            std::string::npos);
}

// Only the index fails (the checkpoint itself fits): the new checkpoint is
// on disk, the index still names only files that exist, and pruning waited.
TEST_F(DiskFull, IndexThatCannotBeWrittenNamesNoRemovedFile) {
  nn::Model model(mlp_spec(), 1);
  auto optimizer = optim::make_optimizer(json("sgd"));
  train::Checkpoints checkpoints(dir_.string(), 1);
  checkpoints.save(model, *optimizer, {1, 0, 1});
  const std::string index = read_file(path("checkpoint"));
  // A directory where the index's temporary file goes: opening it fails,
  // for root too.
  fs::create_directory(path("checkpoint.tmp"));
  drun::testing::expect_usage_error(
      [&] {
        checkpoints.save(model, *optimizer, {2, 0, 2});
      },
      {path("checkpoint")});
  EXPECT_EQ(read_file(path("checkpoint")), index);
  EXPECT_TRUE(fs::exists(checkpoints.path_of(1)));
}

TEST_F(DiskFull, KerasExportFailsByNameAndKeepsThePreviousFile) {
  nn::Model model(mlp_spec(), 1);
  fill(model, 0.25f);
  keras::save_model(model, path("model.h5"), nullptr);
  const auto size = fs::file_size(path("model.h5"));
  fill(model, 4.0f);
  {
    const FileSizeLimit limit(size / 2);
    drun::testing::expect_usage_error([&] { keras::save_model(model, path("model.h5"), nullptr); },
                                      {path("model.h5"), "File too large"});
    drun::testing::expect_usage_error([&] { keras::save_weights(model, path("w.h5")); },
                                      {path("w.h5"), "File too large"});
  }
  EXPECT_EQ(files(), std::vector<std::string>{"model.h5"});
  const auto loaded = keras::load_model(path("model.h5"));
  for (Param* p : loaded->params()) EXPECT_EQ(p->value.f32()[0], 0.25f) << p->name;
}

TEST_F(DiskFull, SummaryJsonFailsByNameAndKeepsThePreviousOne) {
  const json before = {{"global_step", 100}, {"loss", 0.5}};
  io::write_json_atomically(path("summary.json"), before);
  json after = before;
  after["note"] = std::string(4096, 'x');
  {
    const FileSizeLimit limit(1024);
    drun::testing::expect_usage_error(
        [&] { io::write_json_atomically(path("summary.json"), after); },
        {path("summary.json"), "File too large"});
  }
  EXPECT_EQ(files(), std::vector<std::string>{"summary.json"});
  EXPECT_EQ(json::parse(read_file(path("summary.json"))), before);
}

}  // namespace
}  // namespace drun
