// Trains drun's seed CNN on Fashion-MNIST (Debian's dataset-fashion-mnist)
// through the installed library alone, and writes the model as Keras HDF5:
//   c++ -std=c++20 main.cpp $(pkg-config --cflags --libs drun) -o embed
//   ./embed [--epochs N] [--train-limit N] [--out m.h5]
// Under mpirun every rank trains its shard (AllReduce); the chief saves.
#include <drun/drun.hpp>
#include <iostream>
#include <string>

namespace {

struct Args {
  int64_t epochs = 1;
  int64_t train_limit = 0;  // 0: all 60,000 training images
  std::string out = "m.h5";
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw drun::Error("option " + flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--epochs")
      a.epochs = std::stoll(value);
    else if (flag == "--train-limit")
      a.train_limit = std::stoll(value);
    else if (flag == "--out")
      a.out = value;
    else
      throw drun::Error("unknown option " + flag + " (--epochs, --train-limit, --out)");
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    drun::Runtime runtime(argc, argv);
    const Args args = parse_args(argc, argv);

    // The seed CNN (models/seed_cnn.lua): 347,146 parameters.
    auto model = drun::Model::sequential(runtime,
                                         {{"Conv2D",
                                           {{"filters", 32},
                                            {"kernel_size", 3},
                                            {"activation", "relu"},
                                            {"input_shape", {28, 28, 1}}}},
                                          {"MaxPooling2D", {{"pool_size", 2}}},
                                          {"Flatten"},
                                          {"Dense", {{"units", 64}, {"activation", "relu"}}},
                                          {"Dense", {{"units", 10}}}},
                                         /*seed=*/42);
    model.compile({"SGD", {{"learning_rate", 0.01}, {"momentum", 0.9}}},
                  {"SparseCategoricalCrossentropy", {{"from_logits", true}}}, {"accuracy"});

    auto train = drun::Dataset::fashion_mnist("train");
    if (args.train_limit > 0) train = train.take(args.train_limit);
    const auto test = drun::Dataset::fashion_mnist("test").batch(1000);

    drun::FitOptions fit;
    fit.epochs = args.epochs;
    const auto result = model.fit(train.shuffle(42).batch(64), fit, &test);
    if (runtime.is_chief()) {
      std::cout << "step " << result.global_step << ": test accuracy "
                << result.eval.metrics.at("accuracy") << "\n";
      model.save(args.out);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "embed: " << e.what() << "\n";
    return 1;
  }
}
