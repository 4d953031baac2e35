#include "drun/runtime.hpp"

#include "edge.hpp"
#include "runtime_impl.hpp"

namespace drun {

namespace {

std::unique_ptr<Runtime::Impl> make_impl(int* argc, char*** argv, const RuntimeSettings& s) {
  return api::at_edge([&] {
    auto impl = std::make_unique<Runtime::Impl>();
    train::Process::Settings settings;
    settings.threads = s.threads;
    settings.quiet = s.quiet;
    settings.device = s.device;
    impl->process = std::make_unique<train::Process>(argc, argv, settings);
    return impl;
  });
}

}  // namespace

Runtime::Runtime(int& argc, char**& argv, const RuntimeSettings& settings)
    : impl_(make_impl(&argc, &argv, settings)) {}

Runtime::Runtime(const RuntimeSettings& settings) : impl_(make_impl(nullptr, nullptr, settings)) {}

Runtime::~Runtime() = default;

int Runtime::rank() const {
  const auto& ctx = impl_->context();
  return ctx.comm ? ctx.comm->rank() : 0;
}

int Runtime::workers() const {
  return impl_->context().worker_count();
}

const std::string& Runtime::role() const {
  return impl_->context().role;
}

int Runtime::threads() const {
  return impl_->context().exec.threads;
}

}  // namespace drun
