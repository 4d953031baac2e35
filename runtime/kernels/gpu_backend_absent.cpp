// A build without the CUDA backend: no GPUs, and a clear refusal where one
// is asked for.
#include <stdexcept>

#include "kernels/gpu_backend.hpp"

namespace drun::kernels {

namespace {
[[noreturn]] void refuse() {
  throw std::runtime_error(
      "this drun was built without CUDA (-Dcuda=disabled, or no CUDA toolkit at build time)");
}
}  // namespace

bool cuda_built() {
  return false;
}
int cuda_device_count() {
  return 0;
}
std::shared_ptr<cuda::Context> make_cuda_context(int) {
  refuse();
}
std::string cuda_device_name(int) {
  refuse();
}
GpuBackend* gpu_backend() {
  return nullptr;
}

}  // namespace drun::kernels
