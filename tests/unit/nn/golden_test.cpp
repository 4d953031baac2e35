// The seed CNN against a PyTorch reference (tests/golden/seed_cnn.bin, made by
// tools/golden/seed_cnn_torch.py): with the same formula-defined weights and
// batch, drun's loss, logits and all six gradients must match within 1e-4.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "loss_value.hpp"
#include "nn/loss.hpp"
#include "nn/model.hpp"
#include "seed_cnn.hpp"

#ifndef DRUN_SOURCE_DIR
#error "DRUN_SOURCE_DIR must be defined (see tests/unit/meson.build)"
#endif

namespace drun::nn {
namespace {

constexpr int64_t kBatch = 8;

struct Record {
  std::vector<int64_t> dims;
  int64_t numel = 1;
  uint32_t stride = 1;
  std::vector<float> values;  // at flat indices 0, stride, 2 * stride, ...
};

// Reads the golden file; see tools/golden/seed_cnn_torch.py for the format.
std::map<std::string, Record> read_golden(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  const std::vector<char> data((std::istreambuf_iterator<char>(in)), {});
  size_t off = 0;
  auto take = [&](void* dst, size_t n) {
    if (off + n > data.size()) throw std::runtime_error("truncated golden file " + path);
    std::memcpy(dst, data.data() + off, n);
    off += n;
  };
  std::map<std::string, Record> out;
  while (off < data.size()) {
    uint32_t name_len = 0;
    take(&name_len, 4);
    std::string name(name_len, '\0');
    take(name.data(), name_len);
    uint32_t rank = 0;
    take(&rank, 4);
    Record r;
    r.dims.resize(rank);
    for (auto& d : r.dims) {
      take(&d, 8);
      r.numel *= d;
    }
    take(&r.stride, 4);
    if (r.stride == 0) throw std::runtime_error("zero stride in " + path);
    const int64_t count = (r.numel + r.stride - 1) / r.stride;
    r.values.resize(static_cast<size_t>(count));
    take(r.values.data(), static_cast<size_t>(count) * 4);
    out.emplace(name, std::move(r));
  }
  return out;
}

using testing::seed_cnn_spec;

// The generator's weight formulas, in double, cast to float.
void set_golden_weights(Model& m) {
  for (Param* p : m.params()) {
    float* v = p->value.f32();
    const int64_t n = p->value.numel();
    for (int64_t k = 0; k < n; ++k) {
      const double i = static_cast<double>(k);
      double w = 0.0;
      if (p->name == "conv2d/kernel") {
        w = 0.2 * std::sin(0.37 * i + 0.1);
      } else if (p->name == "conv2d/bias") {
        w = 0.01 * std::cos(i);
      } else if (p->name == "dense/kernel") {
        w = 0.02 * std::sin(0.011 * i + 0.3);
      } else if (p->name == "dense/bias") {
        w = 0.01 * std::sin(i);
      } else if (p->name == "dense_1/kernel") {
        w = 0.1 * std::cos(0.07 * i);
      } else if (p->name == "dense_1/bias") {
        w = 0.0;
      } else {
        ADD_FAILURE() << "unexpected parameter " << p->name;
      }
      v[k] = static_cast<float>(w);
    }
  }
}

Tensor golden_images() {
  Tensor x(Shape{kBatch, 28, 28, 1});
  for (int64_t n = 0; n < kBatch; ++n)
    for (int64_t h = 0; h < 28; ++h)
      for (int64_t w = 0; w < 28; ++w)
        x.f32()[(n * 28 + h) * 28 + w] =
            static_cast<float>(static_cast<double>((n * 131 + h * 29 + w * 7) % 256) / 255.0);
  return x;
}

Tensor golden_labels() {
  Tensor y(Shape{kBatch}, DType::i32);
  for (int64_t n = 0; n < kBatch; ++n) y.i32()[n] = static_cast<int32_t>((n * 3) % 10);
  return y;
}

Loss sparse_from_logits() {
  return Loss(json::parse(
      R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}})"));
}

// Max |got - want| over the strided values of the record; checks the shape.
double max_abs_diff(const std::string& name, const Tensor& got, const Record& want) {
  EXPECT_EQ(got.numel(), want.numel) << name;
  EXPECT_EQ(static_cast<size_t>(got.rank()), want.dims.size()) << name;
  for (int i = 0; i < got.rank() && static_cast<size_t>(i) < want.dims.size(); ++i)
    EXPECT_EQ(got.dim(i), want.dims[static_cast<size_t>(i)]) << name << " dim " << i;
  if (got.numel() != want.numel) return INFINITY;
  double worst = 0.0;
  for (size_t j = 0; j < want.values.size(); ++j) {
    const double a = got.f32()[static_cast<int64_t>(j) * want.stride];
    const double d = std::fabs(a - static_cast<double>(want.values[j]));
    if (!(d <= worst)) worst = d;  // NaN propagates
  }
  return worst;
}

const std::string kGoldenPath = std::string(DRUN_SOURCE_DIR) + "/tests/golden/seed_cnn.bin";
constexpr double kTolerance = 1e-4;

// The golden weights, one training forward and backward of the golden images
// with labels y. Returns the loss; logits stay in the model's output layer.
double run_golden_batch(Model& m, const Tensor& y, const Tensor** logits) {
  set_golden_weights(m);
  const Tensor x = golden_images();
  const kernels::Exec ex;
  Loss loss = sparse_from_logits();
  Tensor dlogits;
  *logits = &m.forward(x, true);
  const double l = testing::loss_value(loss, ex, **logits, y, dlogits);
  m.backward(dlogits);
  return l;
}

TEST(Golden, SeedCnnMatchesPyTorch) {
  const auto golden = read_golden(kGoldenPath);
  for (const char* name : {"loss", "logits", "conv2d/kernel", "conv2d/bias", "dense/kernel",
                           "dense/bias", "dense_1/kernel", "dense_1/bias"})
    ASSERT_TRUE(golden.count(name)) << "record '" << name << "' missing from " << kGoldenPath;

  Model m(seed_cnn_spec(), 1);
  const Tensor* logits = nullptr;
  const double l = run_golden_batch(m, golden_labels(), &logits);

  const Record& want_loss = golden.at("loss");
  ASSERT_EQ(want_loss.values.size(), 1u);
  const double loss_diff = std::fabs(l - static_cast<double>(want_loss.values[0]));
  std::printf("golden %-15s max |diff| = %.3e (drun %.7f, torch %.7f)\n", "loss", loss_diff, l,
              static_cast<double>(want_loss.values[0]));
  EXPECT_LE(loss_diff, kTolerance) << "loss: drun " << l << " torch " << want_loss.values[0];

  const double logits_diff = max_abs_diff("logits", *logits, golden.at("logits"));
  std::printf("golden %-15s max |diff| = %.3e\n", "logits", logits_diff);
  EXPECT_LE(logits_diff, kTolerance) << "logits differ from PyTorch's";

  int checked = 0;
  for (Param* p : m.params()) {
    ASSERT_TRUE(p->grad.defined()) << p->name;
    const double d = max_abs_diff(p->name, p->grad, golden.at(p->name));
    std::printf("golden %-15s max |diff| = %.3e\n", p->name.c_str(), d);
    EXPECT_LE(d, kTolerance) << "gradient of " << p->name << " differs from PyTorch's";
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

// The converse: the comparison can fail. Other labels give another loss and
// other gradients. The reference logits are small (|z| < 0.01), so every
// labelling has a loss within about 1e-4 of ln(10): the loss moves well beyond
// float32 rounding (~2e-7 here) but not beyond the tolerance; the gradients,
// which carry (softmax - onehot) / 8, are what make the golden check sharp.
TEST(Golden, PerturbedLabelsChangeTheLossAndGradients) {
  const auto golden = read_golden(kGoldenPath);
  Model m(seed_cnn_spec(), 1);
  Tensor y = golden_labels();
  for (int64_t n = 0; n < kBatch; ++n) y.i32()[n] = (y.i32()[n] + 1) % 10;
  const Tensor* logits = nullptr;
  const double l = run_golden_batch(m, y, &logits);
  const double want = golden.at("loss").values[0];
  std::printf("perturbed labels: loss %.7f, golden %.7f, |diff| = %.3e\n", l, want,
              std::fabs(l - want));
  EXPECT_GT(std::fabs(l - want), 1e-5) << "perturbed labels gave the golden loss " << l;
  // Logits do not depend on the labels; the gradients do.
  EXPECT_LE(max_abs_diff("logits", *logits, golden.at("logits")), kTolerance);
  for (Param* p : m.params()) {
    const double d = max_abs_diff(p->name, p->grad, golden.at(p->name));
    std::printf("perturbed labels: %-15s max |diff| = %.3e\n", p->name.c_str(), d);
    EXPECT_GT(d, kTolerance) << "the golden check would not notice wrong labels in " << p->name;
  }
}

}  // namespace
}  // namespace drun::nn
