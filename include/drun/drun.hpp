// drun's public C++ API (libdrun): everything in one include.
//   drun::Runtime runtime(argc, argv);
//   auto model = drun::Model::sequential(runtime, {...layers...});
//   model.compile({"SGD", {{"learning_rate", 0.01}}}, {"SparseCategoricalCrossentropy", ...});
//   model.fit(drun::Dataset::fashion_mnist("train").shuffle(42).batch(64));
//   if (runtime.is_chief()) model.save("m.h5");
#pragma once
#include "drun/config.hpp"
#include "drun/dataset.hpp"
#include "drun/error.hpp"
#include "drun/model.hpp"
#include "drun/runtime.hpp"
#include "drun/version.hpp"
