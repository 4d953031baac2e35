// A build without GPU backends: device tensors cannot exist.
#include <stdexcept>
#include <string>

#include "tensor/device_memory.hpp"
#include "tensor/tensor.hpp"

namespace drun::device_memory {

namespace {
[[noreturn]] void refuse(Device device) {
  throw std::runtime_error(std::string("no ") + device_name(device) +
                           " memory: this drun was built without CUDA (-Dcuda=disabled or no "
                           "CUDA toolkit at build time)");
}
}  // namespace

void* allocate(Device device, size_t) {
  refuse(device);
}
void release(Device, void*, size_t) {}
void copy(void*, const void*, size_t) {
  refuse(Device::cuda);
}
void zero(Device device, void*, size_t) {
  refuse(device);
}
bool pin(void*, size_t) {
  return false;
}
void unpin(void*) {}

}  // namespace drun::device_memory
