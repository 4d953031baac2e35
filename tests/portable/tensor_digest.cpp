// tensor_digest FILE.h5: one line per tensor of a drun tensor file (a
// checkpoint, a parameter-server shard) with its shape and a digest of its
// values' bit patterns, then the file's "drun" attribute. The digest is taken
// over each float's bits as a number, not over memory, so two machines print
// the same line exactly when they read the same values: platforms/ppc64le
// compares what this prints on ppc64le (under qemu) and on x86-64 for a
// checkpoint written on ppc64le.
#include <bit>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "io/h5_tensors.hpp"

namespace {

// FNV-1a over the 32-bit patterns, least significant byte first.
uint64_t digest(const drun::Tensor& t) {
  uint64_t h = 14695981039346656037ull;
  for (float v : t.span_f32()) {
    const auto bits = std::bit_cast<uint32_t>(v);
    for (int byte = 0; byte < 4; ++byte) {
      h ^= (bits >> (8 * byte)) & 0xffu;
      h *= 1099511628211ull;
    }
  }
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tensor_digest FILE.h5\n");
    return 2;
  }
  try {
    const drun::io::TensorFile file = drun::io::read_tensor_file(argv[1]);
    int64_t values = 0;
    for (const auto& [name, t] : file.tensors) {
      std::string shape;
      for (int64_t d : t.shape().dims()) {
        if (!shape.empty()) shape += 'x';
        shape += std::to_string(d);
      }
      std::printf("%s %s %016llx\n", name.c_str(), shape.c_str(),
                  static_cast<unsigned long long>(digest(t)));
      values += t.numel();
    }
    std::printf("attributes %s\n", file.attributes.dump().c_str());
    std::printf("%zu tensors, %lld values\n", file.tensors.size(), static_cast<long long>(values));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tensor_digest: %s\n", e.what());
    return 1;
  }
  return 0;
}
