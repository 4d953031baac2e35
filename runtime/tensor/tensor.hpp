// Tensor: a contiguous, 64-byte aligned, row-major (NHWC for images) array with
// a shape, an element type and a device tag. Copies share storage (like a
// shared_ptr); clone() copies the data. Layers hold their output tensors and
// reuse them: allocation happens only when a shape first grows.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "tensor/dtype.hpp"
#include "tensor/shape.hpp"

namespace drun {

const char* device_name(Device d);

// Owns one aligned allocation: host memory, or a GPU's from the backend's
// pool (tensor/device_memory.hpp).
class Storage {
 public:
  static constexpr size_t kAlign = 64;
  Storage(size_t bytes, Device device, bool pinned = false);
  // Memory owned elsewhere (e.g. a node-shared MPI window), which must outlive
  // it, or which `keeper` keeps alive (e.g. a memory-mapped file) for as long
  // as this storage lives. Unlike owned storage, no padding past the end.
  Storage(void* borrowed, size_t bytes, std::shared_ptr<const void> keeper = nullptr);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  bool owned_ = true;
  bool pinned_ = false;
  Device device_ = Device::cpu;
  std::shared_ptr<const void> keeper_;
};

class Tensor {
 public:
  Tensor() = default;
  Tensor(Shape shape, DType dtype = DType::f32, Device device = Device::cpu);

  static Tensor zeros(Shape shape, DType dtype = DType::f32, Device device = Device::cpu);
  // Zeros in host memory that is pinned where a GPU is present
  // (tensor/device_memory.hpp): a CPU tensor that the GPU copies to and from
  // at full speed.
  static Tensor pinned(Shape shape, DType dtype = DType::f32);
  // A host tensor over memory it does not own; the memory must outlive it
  // and every copy of it.
  static Tensor borrowed(void* data, Shape shape, DType dtype = DType::f32);
  // A host tensor over memory that `keeper` keeps alive as long as any copy
  // of the tensor lives.
  static Tensor kept_alive_by(std::shared_ptr<const void> keeper, void* data, Shape shape,
                              DType dtype = DType::f32);

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  int64_t numel() const { return shape_.numel(); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  bool defined() const { return storage_ != nullptr; }
  int64_t dim(int i) const { return shape_[i]; }
  int rank() const { return shape_.rank(); }

  float* f32();
  const float* f32() const;
  int32_t* i32();
  const int32_t* i32() const;
  uint8_t* u8();
  const uint8_t* u8() const;
  // The raw 16-bit patterns of an f16 or bf16 tensor.
  uint16_t* bits16();
  const uint16_t* bits16() const;
  std::span<float> span_f32() { return {f32(), static_cast<size_t>(numel())}; }
  std::span<const float> span_f32() const { return {f32(), static_cast<size_t>(numel())}; }

  // Makes this tensor hold `shape` on `device`: reuses the storage when it is
  // on that device and large enough, so the steady-state step never allocates.
  void ensure(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu);
  // Same storage, new shape with the same number of elements.
  Tensor reshaped(const Shape& shape) const;
  // Rows [begin, end) of the leading dimension, sharing storage.
  Tensor rows(int64_t begin, int64_t end) const;
  Tensor clone() const;
  // This tensor where it already is on `device`, else a copy there.
  Tensor to(Device device) const;
  void zero();
  void fill(float v);
  // Copies src's elements in, between any two devices (blocking).
  void copy_from(const Tensor& src);
  size_t capacity_bytes() const { return storage_ ? storage_->bytes() - offset_ : 0; }
  const void* raw() const;
  void* raw();

 private:
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;  // bytes
  Shape shape_;
  DType dtype_ = DType::f32;
  Device device_ = Device::cpu;
};

}  // namespace drun
