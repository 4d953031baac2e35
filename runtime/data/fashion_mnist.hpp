// Fashion-MNIST (Zalando, 28x28 grey images of 10 clothing classes) from the
// four idx files that Debian's `dataset-fashion-mnist` package installs.
#pragma once
#include <string>

#include "data/dataset.hpp"

namespace drun::data {

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
inline constexpr int kFashionMnistClasses = 10;

// The folder to read from: `dir` when given, else $DRUN_DATA_DIR when set,
// else kFashionMnistDir.
std::string fashion_mnist_dir(const std::string& dir = "");

// split "train" (60000 examples) or "test" (10000). x is float32 (N, 28, 28, 1)
// with raw values 0..255, y int32 (N) in 0..9. Each file is looked up as
// <name>.gz, then <name>; either may be compressed or raw.
Dataset load_fashion_mnist(const std::string& split, const std::string& dir = "");

}  // namespace drun::data
