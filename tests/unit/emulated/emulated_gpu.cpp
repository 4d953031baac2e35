// An emulated GPU for CI, which has none: "device" memory is host memory
// tagged Device::cuda, and each op of the GpuBackend runs the CPU op on host
// views of its tensors. Linked instead of drun_backend into
// test_emulated_gpu, it drives every line of the runtime's GPU plumbing
// (variables moved by set_exec, buffers sized on the device, input staging,
// host-side readers, HostStaged, AllReduce's device buckets) through the
// dispatcher's check that each op's tensors are all on its device; only the
// CUDA kernels themselves are left to the GPU suites.
#include "emulated_gpu.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "kernels/gpu_backend.hpp"
#include "tensor/device_memory.hpp"

namespace drun::testing {
namespace {
std::atomic<int64_t> copies{0};
}
int64_t emulated_copies() {
  return copies.load();
}
}  // namespace drun::testing

namespace drun::device_memory {

void* allocate(Device, size_t bytes) {
  return ::operator new (bytes, std::align_val_t{Storage::kAlign});
}
void release(Device, void* p, size_t) {
  ::operator delete (p, std::align_val_t{Storage::kAlign});
}
void copy(void* dst, const void* src, size_t bytes) {
  ++testing::copies;
  std::memcpy(dst, src, bytes);
}
void zero(Device, void* p, size_t bytes) {
  std::memset(p, 0, bytes);
}
bool pin(void*, size_t) {
  return false;  // host memory already
}
void unpin(void*) {}

}  // namespace drun::device_memory

namespace drun::kernels {

namespace cuda {
class Context {};
}  // namespace cuda

namespace {

const Exec kHost{Device::cpu, 1};

// The same memory as the CPU sees it.
Tensor host(const Tensor& t) {
  if (t.device() != Device::cuda) throw std::logic_error("emulated GPU op given a host tensor");
  return Tensor::borrowed(const_cast<void*>(t.raw()), t.shape(), t.dtype());
}

// An op's argument as the CPU op takes it: a tensor becomes a host view of
// its memory (an empty tensor stays empty), a tensor pointer a pointer to
// such a view (null stays null), the Exec the host's; anything else passes
// as it is. The views live until the end of the call that uses them.
class HostView {
 public:
  explicit HostView(const Tensor& t) : view_(t.defined() ? host(t) : Tensor()) {}
  operator Tensor&() { return view_; }  // NOLINT: converts to the op's parameter

 private:
  Tensor view_;
};

class HostPointer {
 public:
  explicit HostPointer(const Tensor* t) : view_(t ? host(*t) : Tensor()), null_(!t) {}
  operator Tensor*() { return null_ ? nullptr : &view_; }  // NOLINT

 private:
  Tensor view_;
  bool null_;
};

HostView on_host(const Tensor& t) {
  return HostView(t);
}
HostPointer on_host(const Tensor* t) {
  return HostPointer(t);
}
HostPointer on_host(Tensor* t) {
  return HostPointer(t);
}
const Exec& on_host(const Exec&) {
  return kHost;
}
// Anything else (flags, scalars, geometries, the loss's bad_row): a
// non-template above wins over this for tensors and the Exec.
template <class T>
T on_host(T value) {
  return value;
}

template <class R, class... Params, class... Args>
R run_on_host(R (*op)(Params...), const Args&... args) {
  return op(on_host(args)...);
}

class EmulatedStager final : public GpuStager {
 public:
  const Tensor& stage(const Tensor& batch) override {
    slot_.ensure(batch.shape(), batch.dtype(), Device::cuda);
    slot_.copy_from(batch);
    return slot_;
  }

 private:
  Tensor slot_;
};

// Every op of kernels/op_list.hpp, as the CPU op on host views of its
// arguments (kernels::op with a CPU Exec: ops.cpp's on_cpu side).
class EmulatedGpu final : public GpuBackend {
 public:
  std::unique_ptr<GpuStager> make_stager(const Exec&) override {
    return std::make_unique<EmulatedStager>();
  }

#define DRUN_OP(ret, name, params, args, device, checks)   \
  ret name params override {                               \
    return run_on_host(&kernels::name, DRUN_UNPAREN args); \
  }
#include "kernels/op_list.hpp"
#undef DRUN_OP
};

}  // namespace

bool cuda_built() {
  return true;
}
// One GPU, or DRUN_EMULATED_GPUS of them (the multi-rank tests want one per rank).
int cuda_device_count() {
  const char* n = std::getenv("DRUN_EMULATED_GPUS");
  return n ? std::atoi(n) : 1;
}
std::shared_ptr<cuda::Context> make_cuda_context(int) {
  return std::make_shared<cuda::Context>();
}
std::string cuda_device_name(int) {
  return "emulated GPU (host memory, CPU kernels)";
}
GpuBackend* gpu_backend() {
  static EmulatedGpu gpu;
  return &gpu;
}

}  // namespace drun::kernels
