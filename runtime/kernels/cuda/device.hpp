// The CUDA devices of this process: how many there are, which one this rank
// uses (placement gives each worker its GPU), and a caching pool of device
// memory so that a warm training step never calls cudaMalloc. Plain C++: only
// the .cpp/.cu files include the CUDA headers.
//
// Streams: every kernel, cuBLAS and cuDNN call and every asynchronous copy of
// a step goes to the calling thread's default stream, cudaStreamPerThread
// (nvcc compiles the kernels with --default-stream per-thread), never to the
// legacy default stream: a stream of its own can be captured into a CUDA
// graph (kernels/gpu_backend.hpp), the legacy one cannot, and nothing else
// waits for it by accident. The blocking copies (copy_to_host, ...) run on
// the legacy stream, which waits for it: they stay correct, and inside a
// capture they fail it, as they should.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace drun::kernels::cuda {

// GPUs visible to this process; 0 when there is no driver or no device
// (never throws: a CPU-only machine is a normal case).
int device_count();
// Why device_count() is 0, for skip messages ("no CUDA driver", ...).
std::string no_device_reason();
void set_device(int index);
std::string device_name(int index);
void synchronize();

// Device memory in size classes (powers of two from 256 bytes); a released
// block waits in its class for the next request of that class.
class DevicePool {
 public:
  DevicePool() = default;
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  void* allocate(size_t bytes);
  void release(void* p, size_t bytes);
  // Returns every cached block to the driver.
  void trim();
  int64_t driver_allocations() const { return driver_allocations_; }
  // Device tensors' memory allocated or freed so far (device_memory.cpp
  // counts; a kernel's Scratch does not, it is free again before the next
  // op): a CUDA graph's buffers are where it left them while this stays the
  // same. A Scratch block a graph used may serve other ops in between: they
  // run in stream order, before or after the graph, never beside it.
  int64_t tensor_changes() const { return tensor_changes_; }
  void count_tensor_change() { ++tensor_changes_; }
  static size_t size_class(size_t bytes);

 private:
  std::map<size_t, std::vector<void*>> free_;
  int64_t driver_allocations_ = 0;
  int64_t tensor_changes_ = 0;
};

// The process's pool for its current device (one GPU per rank): the
// runtime's device tensors and the kernels' scratch come from here. Like the
// device itself it is process-wide; it lives until exit.
DevicePool& device_pool();

// Device scratch from device_pool() for the length of one kernel call. Its
// release is safe while kernels that use it may still run: every kernel runs
// on the one compute stream, so the next user of the block runs after them.
class Scratch {
 public:
  explicit Scratch(size_t bytes) : bytes_(bytes), p_(device_pool().allocate(bytes)) {}
  ~Scratch() { device_pool().release(p_, bytes_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return p_; }
  float* f32() const { return static_cast<float*>(p_); }

 private:
  size_t bytes_;
  void* p_;
};

// Copies between host and device memory (blocking).
void copy_to_device(void* dst, const void* src, size_t bytes);
void copy_to_host(void* dst, const void* src, size_t bytes);

}  // namespace drun::kernels::cuda
