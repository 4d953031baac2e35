#include "tensor/tensor.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <utility>

#include "tensor/device_memory.hpp"

namespace drun {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32:
      return 4;
    case DType::i32:
      return 4;
    case DType::u8:
      return 1;
    case DType::f16:
    case DType::bf16:
      return 2;
  }
  return 4;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "float32";
    case DType::i32:
      return "int32";
    case DType::u8:
      return "uint8";
    case DType::f16:
      return "float16";
    case DType::bf16:
      return "bfloat16";
  }
  return "?";
}
const char* device_name(Device d) {
  return d == Device::cpu ? "cpu" : "cuda";
}

Storage::Storage(size_t bytes, Device device, bool pinned) : device_(device) {
  if (device != Device::cpu) {
    bytes_ = bytes ? bytes : kAlign;
    data_ = device_memory::allocate(device, bytes_);
    return;
  }
  // Rounded up so vector loops may read a full register past the end.
  bytes_ = std::max<size_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  data_ = ::operator new (bytes_, std::align_val_t{kAlign});
  if (pinned) pinned_ = device_memory::pin(data_, bytes_);
}

Storage::Storage(void* borrowed, size_t bytes, std::shared_ptr<const void> keeper)
    : data_(borrowed),
      bytes_(bytes),
      owned_(false),
      device_(Device::cpu),
      keeper_(std::move(keeper)) {}

Storage::~Storage() {
  if (!owned_) return;
  if (device_ != Device::cpu) {
    device_memory::release(device_, data_, bytes_);
    return;
  }
  if (pinned_) device_memory::unpin(data_);
  ::operator delete (data_, std::align_val_t{kAlign});
}

Tensor::Tensor(Shape shape, DType dtype, Device device)
    : storage_(std::make_shared<Storage>(shape.numel() * dtype_size(dtype), device)),
      shape_(shape),
      dtype_(dtype),
      device_(device) {}

Tensor Tensor::zeros(Shape shape, DType dtype, Device device) {
  Tensor t(shape, dtype, device);
  t.zero();
  return t;
}

Tensor Tensor::pinned(Shape shape, DType dtype) {
  Tensor t;
  t.storage_ = std::make_shared<Storage>(static_cast<size_t>(shape.numel()) * dtype_size(dtype),
                                         Device::cpu, true);
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.zero();
  return t;
}

Tensor Tensor::borrowed(void* data, Shape shape, DType dtype) {
  Tensor t;
  t.storage_ =
      std::make_shared<Storage>(data, static_cast<size_t>(shape.numel()) * dtype_size(dtype));
  t.shape_ = shape;
  t.dtype_ = dtype;
  return t;
}

Tensor Tensor::kept_alive_by(std::shared_ptr<const void> keeper, void* data, Shape shape,
                             DType dtype) {
  Tensor t;
  t.storage_ = std::make_shared<Storage>(
      data, static_cast<size_t>(shape.numel()) * dtype_size(dtype), std::move(keeper));
  t.shape_ = shape;
  t.dtype_ = dtype;
  return t;
}

static void check(const Tensor& t, DType want) {
  if (!t.defined()) throw std::logic_error("use of an undefined tensor");
  if (t.dtype() != want)
    throw std::logic_error(std::string("tensor is ") + dtype_name(t.dtype()) + ", expected " +
                           dtype_name(want));
}

const void* Tensor::raw() const {
  return storage_ ? static_cast<const char*>(storage_->data()) + offset_ : nullptr;
}
void* Tensor::raw() {
  return storage_ ? static_cast<char*>(storage_->data()) + offset_ : nullptr;
}

float* Tensor::f32() {
  check(*this, DType::f32);
  return static_cast<float*>(raw());
}
const float* Tensor::f32() const {
  check(*this, DType::f32);
  return static_cast<const float*>(raw());
}
int32_t* Tensor::i32() {
  check(*this, DType::i32);
  return static_cast<int32_t*>(raw());
}
const int32_t* Tensor::i32() const {
  check(*this, DType::i32);
  return static_cast<const int32_t*>(raw());
}
uint8_t* Tensor::u8() {
  check(*this, DType::u8);
  return static_cast<uint8_t*>(raw());
}
const uint8_t* Tensor::u8() const {
  check(*this, DType::u8);
  return static_cast<const uint8_t*>(raw());
}
uint16_t* Tensor::bits16() {
  check(*this, dtype_ == DType::bf16 ? DType::bf16 : DType::f16);
  return static_cast<uint16_t*>(raw());
}
const uint16_t* Tensor::bits16() const {
  check(*this, dtype_ == DType::bf16 ? DType::bf16 : DType::f16);
  return static_cast<const uint16_t*>(raw());
}

void Tensor::ensure(const Shape& shape, DType dtype, Device device) {
  size_t need = static_cast<size_t>(shape.numel()) * dtype_size(dtype);
  if (!storage_ || capacity_bytes() < need || device_ != device) {
    storage_ = std::make_shared<Storage>(need, device);
    offset_ = 0;
    device_ = device;
  }
  shape_ = shape;
  dtype_ = dtype;
}

Tensor Tensor::reshaped(const Shape& shape) const {
  if (shape.numel() != numel())
    throw std::invalid_argument("cannot reshape " + shape_.str() + " to " + shape.str());
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::rows(int64_t begin, int64_t end) const {
  if (shape_.rank() == 0 || begin < 0 || end > shape_[0] || begin > end)
    throw std::out_of_range("rows [" + std::to_string(begin) + ", " + std::to_string(end) +
                            ") of tensor " + shape_.str());
  Tensor t = *this;
  t.shape_[0] = end - begin;
  t.offset_ += static_cast<size_t>(begin * shape_.inner()) * dtype_size(dtype_);
  return t;
}

Tensor Tensor::clone() const {
  Tensor t(shape_, dtype_, device_);
  t.copy_from(*this);
  return t;
}

Tensor Tensor::to(Device device) const {
  if (device == device_) return *this;
  Tensor t(shape_, dtype_, device);
  t.copy_from(*this);
  return t;
}

void Tensor::zero() {
  if (!bytes()) return;
  if (device_ == Device::cpu)
    std::memset(raw(), 0, bytes());
  else
    device_memory::zero(device_, raw(), bytes());
}

void Tensor::fill(float v) {
  if (device_ != Device::cpu) {  // rare (slot initial values): fill on the host, copy once
    Tensor host(shape_, dtype_);
    host.fill(v);
    copy_from(host);
    return;
  }
  float* p = f32();
  for (int64_t i = 0, n = numel(); i < n; ++i) p[i] = v;
}

void Tensor::copy_from(const Tensor& src) {
  if (src.numel() != numel() || src.dtype() != dtype())
    throw std::invalid_argument("copy of " + src.shape().str() + " into " + shape_.str());
  if (!bytes()) return;
  if (device_ == Device::cpu && src.device() == Device::cpu)
    std::memcpy(raw(), src.raw(), bytes());
  else
    device_memory::copy(raw(), src.raw(), bytes());
}

}  // namespace drun
