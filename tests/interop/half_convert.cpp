// The cast op's conversions on raw little-endian files, for
// half_reference_test.py to compare with numpy's and ml_dtypes'.
//   half_convert narrow IN.f32 OUT.f16 OUT.bf16   float32 -> float16, bfloat16
//   half_convert widen IN.u16 OUT_F16.f32 OUT_BF16.f32   each 16-bit pattern as both types
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "kernels/ops.hpp"

namespace {

std::vector<char> read_all(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::string("cannot read ") + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const char* path, const drun::Tensor& t) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.bytes()));
  if (!out) throw std::runtime_error(std::string("cannot write ") + path);
}

// The file's bytes as a tensor of `dtype`.
drun::Tensor load(const char* path, drun::DType dtype) {
  const std::vector<char> bytes = read_all(path);
  drun::Tensor t(drun::Shape{static_cast<int64_t>(bytes.size() / drun::dtype_size(dtype))}, dtype);
  std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(t.bytes()),
            static_cast<char*>(t.raw()));
  return t;
}

}  // namespace

int main(int argc, char** argv) try {
  using drun::DType, drun::Tensor;
  const drun::kernels::Exec ex{drun::Device::cpu, 2};
  const std::string mode = argc == 5 ? argv[1] : "";
  if (mode == "narrow") {
    const Tensor x = load(argv[2], DType::f32);
    Tensor h(x.shape(), DType::f16), b(x.shape(), DType::bf16);
    drun::kernels::cast(ex, x, h);
    drun::kernels::cast(ex, x, b);
    write_all(argv[3], h);
    write_all(argv[4], b);
    return 0;
  }
  if (mode == "widen") {
    const Tensor h = load(argv[2], DType::f16);
    const Tensor b = load(argv[2], DType::bf16);
    Tensor from_h(h.shape()), from_b(b.shape());
    drun::kernels::cast(ex, h, from_h);
    drun::kernels::cast(ex, b, from_b);
    write_all(argv[3], from_h);
    write_all(argv[4], from_b);
    return 0;
  }
  std::cerr << "usage: half_convert narrow IN.f32 OUT.f16 OUT.bf16 | widen IN.u16 OUT_F16.f32 "
               "OUT_BF16.f32\n";
  return 2;
} catch (const std::exception& e) {
  std::cerr << "half_convert: " << e.what() << "\n";
  return 1;
}
