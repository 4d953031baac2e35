// An emulated GPU for CI, which has none: "device" memory is host memory
// tagged Device::cuda, and each op of the GpuBackend runs the CPU op on host
// views of its tensors. Linked instead of drun_backend into
// test_emulated_gpu, it drives every line of the runtime's GPU plumbing
// (variables moved by set_exec, buffers sized on the device, input staging,
// host-side readers, HostStaged, AllReduce's device buckets) through the
// dispatcher's check that each op's tensors are all on its device; only the
// CUDA kernels themselves are left to the GPU suites.
//
// CUDA graphs are emulated the same way: between begin_capture and
// end_capture each op is recorded with its arguments as they are (host views
// of the same memory, scalars by value) instead of run, and the graph runs
// the records again. So a step that passes anything that changes from step
// to step as an argument, or that reads a tensor's value on the host, does
// here what it would do on a GPU: trains on stale values, or fails its
// capture (a copy between host and device throws while recording, as
// cudaMemcpy does in a CUDA capture).
#include "emulated_gpu.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kernels/gpu_backend.hpp"
#include "tensor/device_memory.hpp"

namespace drun::testing {
namespace {
std::atomic<int64_t> copies{0};
// Device tensors allocated or freed (a graph is current while it stays the same).
std::atomic<int64_t> tensor_changes{0};
// The ops recorded since begin_capture; null when not capturing.
std::vector<std::function<void()>>* recording = nullptr;
}  // namespace
int64_t emulated_copies() {
  return copies.load();
}
}  // namespace drun::testing

namespace drun::device_memory {

void* allocate(Device, size_t bytes) {
  ++testing::tensor_changes;
  return ::operator new (bytes, std::align_val_t{Storage::kAlign});
}
void release(Device, void* p, size_t) {
  ++testing::tensor_changes;
  ::operator delete (p, std::align_val_t{Storage::kAlign});
}
void copy(void* dst, const void* src, size_t bytes) {
  if (testing::recording)
    throw std::runtime_error("a blocking copy while a step is captured (cudaMemcpy)");
  ++testing::copies;
  std::memcpy(dst, src, bytes);
}
void zero(Device, void* p, size_t bytes) {
  if (testing::recording) {  // cudaMemsetAsync on the stream: recorded
    testing::recording->push_back([p, bytes] { std::memset(p, 0, bytes); });
    return;
  }
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

// Runs the CPU op on host views of its arguments, or records it so while a
// step is captured. A wait for the device cannot be captured. An op with a
// result (a size query; whether a convolution also wrote the pooled output
// or the moments, which on a GPU depends on the backend, not on the data)
// also runs at once, for the result: it only writes its outputs, which the
// graph writes again in their turn.
template <class R, class... Params, class... Args>
R run_or_record(std::string_view name, R (*op)(Params...), const Args&... args) {
  if (testing::recording) {
    if (name == "synchronize")
      throw std::runtime_error("synchronize while a step is captured (cudaDeviceSynchronize)");
    testing::recording->push_back([op, views = std::make_tuple(on_host(args)...)]() mutable {
      std::apply([op](auto&... v) { op(v...); }, views);
    });
    if constexpr (std::is_void_v<R>) return;
  }
  return op(on_host(args)...);
}

class EmulatedGraph final : public GpuGraph {
 public:
  explicit EmulatedGraph(std::vector<std::function<void()>> ops)
      : ops_(std::move(ops)), tensor_changes_(testing::tensor_changes.load()) {}
  bool current() const override { return testing::tensor_changes.load() == tensor_changes_; }
  void launch() override {
    for (auto& op : ops_) op();
  }

 private:
  std::vector<std::function<void()>> ops_;
  int64_t tensor_changes_;
};

// Two device buffers used in turn, as the CUDA stager's: a step's graph is
// made per input buffer (train/step_graph.hpp).
class EmulatedStager final : public GpuStager {
 public:
  const Tensor& stage(const Tensor& batch) override {
    current_ ^= 1;
    Tensor& slot = slots_[current_];
    slot.ensure(batch.shape(), batch.dtype(), Device::cuda);
    slot.copy_from(batch);
    return slot;
  }

 private:
  Tensor slots_[2];
  int current_ = 0;
};

// Every op of kernels/op_list.hpp, as the CPU op on host views of its
// arguments (kernels::op with a CPU Exec: ops.cpp's on_cpu side).
class EmulatedGpu final : public GpuBackend {
 public:
  std::unique_ptr<GpuStager> make_stager(const Exec&) override {
    return std::make_unique<EmulatedStager>();
  }

  void begin_capture(const Exec&) override {
    if (testing::recording) throw std::logic_error("begin_capture while capturing");
    recorded_.clear();
    testing::recording = &recorded_;
  }
  std::unique_ptr<GpuGraph> end_capture(const Exec&, std::string& why) override {
    if (!testing::recording) {
      why = "end_capture without begin_capture";
      return nullptr;
    }
    testing::recording = nullptr;
    return std::make_unique<EmulatedGraph>(std::move(recorded_));
  }

#define DRUN_OP(ret, name, params, args, device, checks)            \
  ret name params override {                                        \
    return run_or_record(#name, &kernels::name, DRUN_UNPAREN args); \
  }
#include "kernels/op_list.hpp"
#undef DRUN_OP

 private:
  std::vector<std::function<void()>> recorded_;
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
