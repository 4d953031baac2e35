#include "drun/dataset.hpp"

#include <algorithm>
#include <utility>

#include "data/csv.hpp"
#include "data/fashion_mnist.hpp"
#include "data/idx_pair.hpp"
#include "data/pipeline_spec.hpp"
#include "data/reader_registry.hpp"
#include "data/selection.hpp"
#include "dataset_impl.hpp"
#include "edge.hpp"

namespace drun {

namespace {

std::shared_ptr<const Dataset::Impl> loaded(data::Dataset&& ds) {
  auto impl = std::make_shared<Dataset::Impl>();
  impl->input.dataset = std::make_shared<const data::Dataset>(std::move(ds));
  return impl;
}

}  // namespace

// Dataset's constructor is private: these functions make its Impl, and the
// pipeline steps below copy it with one more op.
Dataset Dataset::fashion_mnist(const std::string& split, const std::string& dir, bool scale) {
  return api::at_edge([&] {
    Dataset ds(loaded(data::load_fashion_mnist(split, dir)));
    return scale ? ds.scale(1.0 / 255) : ds;
  });
}

Dataset Dataset::idx(const std::string& images, const std::string& labels) {
  return api::at_edge(
      [&] { return Dataset(loaded(data::load_idx_pair(images, labels, "Dataset::idx"))); });
}

Dataset Dataset::csv(const std::string& path, const std::string& options_json) {
  return api::at_edge([&] {
    json parsed = json::parse(options_json, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object())
      throw Error("Dataset::csv: options must be a JSON object, got '" + options_json + "'");
    // data.csv's options, the path apart (the first argument here).
    if (parsed.contains("path"))
      throw Error("Dataset::csv: unknown option 'path' (the path is the first argument)");
    parsed["path"] = path;
    Options o(parsed, "Dataset::csv", data::csv_reader().about.schema);
    const auto opts = data::parse_csv_options(o);
    return Dataset(loaded(data::read_csv(path, opts)));
  });
}

Dataset Dataset::arrays(const std::vector<float>& x, const std::vector<int64_t>& example_shape,
                        const std::vector<int>& labels) {
  return api::at_edge([&] {
    std::vector<int64_t> dims{static_cast<int64_t>(labels.size())};
    dims.insert(dims.end(), example_shape.begin(), example_shape.end());
    const Shape shape(dims);
    if (shape.numel() != static_cast<int64_t>(x.size()))
      throw Error("Dataset::arrays: " + std::to_string(labels.size()) + " labels and examples of " +
                  "shape " + Shape(example_shape).str() + " need " + std::to_string(shape.numel()) +
                  " values of x, got " + std::to_string(x.size()));
    data::Dataset ds;
    ds.x = Tensor(shape);
    std::copy(x.begin(), x.end(), ds.x.f32());
    ds.y = Tensor(Shape{static_cast<int64_t>(labels.size())}, DType::i32);
    std::copy(labels.begin(), labels.end(), ds.y.i32());
    ds.y = data::labels_or_targets(ds.y, "Dataset::arrays");  // class ids are >= 0
    data::check_dataset(ds, "Dataset::arrays");
    return Dataset(loaded(std::move(ds)));
  });
}

namespace {

std::shared_ptr<const Dataset::Impl> with_op(const Dataset::Impl& from, json op) {
  auto impl = std::make_shared<Dataset::Impl>(from);
  impl->input.ops.push_back(std::move(op));
  data::parse_pipeline_ops(impl->input.ops);  // a bad value fails here, not at fit
  return impl;
}

}  // namespace

Dataset Dataset::shuffle(uint64_t seed) const {
  return api::at_edge([&] {
    return Dataset(with_op(*impl_, {{"op", "shuffle"}, {"seed", seed}}));
  });
}

Dataset Dataset::batch(int64_t size, bool drop_remainder) const {
  return api::at_edge([&] {
    return Dataset(
        with_op(*impl_, {{"op", "batch"}, {"size", size}, {"drop_remainder", drop_remainder}}));
  });
}

Dataset Dataset::take(int64_t examples) const {
  return api::at_edge([&] { return Dataset(with_op(*impl_, {{"op", "take"}, {"n", examples}})); });
}

Dataset Dataset::skip(int64_t examples) const {
  return api::at_edge([&] { return Dataset(with_op(*impl_, {{"op", "skip"}, {"n", examples}})); });
}

Dataset Dataset::scale(double factor) const {
  return api::at_edge([&] {
    return Dataset(with_op(*impl_, {{"op", "scale"}, {"factor", factor}}));
  });
}

Dataset Dataset::repeated(int64_t passes) const {
  return api::at_edge([&] {
    return Dataset(with_op(*impl_, {{"op", "repeat"}, {"count", passes}}));
  });
}

int64_t Dataset::size() const {
  return api::at_edge([&] {
    const auto spec = data::parse_pipeline_ops(impl_->input.ops);
    return data::count_selected(spec.select, impl_->input.dataset->size());
  });
}

std::vector<int64_t> Dataset::example_shape() const {
  const Shape s = impl_->input.dataset->example_shape();
  std::vector<int64_t> out;
  for (int i = 0; i < s.rank(); ++i) out.push_back(s[i]);
  return out;
}

}  // namespace drun
