// Convolutions on the GPU through cuDNN, on the shared geometry
// (kernels/types.hpp): NHWC activations as drun keeps them, kernels in
// cuDNN's NHWC filter layout (O, KH, KW, I), converted from and to Keras'
// HWIO at the edge. TensorFlow's 'same' padding puts an odd pixel at the
// bottom/right, which cuDNN's symmetric padding cannot say: such inputs are
// padded explicitly first (and their gradients cropped).
#pragma once
#include <cstddef>
#include <memory>

#include "kernels/types.hpp"

namespace drun::kernels::cuda {

// A cuDNN handle; one per device and thread.
class Dnn {
 public:
  Dnn();
  ~Dnn();
  Dnn(const Dnn&) = delete;
  Dnn& operator=(const Dnn&) = delete;
  void* raw() const;  // cudnnHandle_t

 private:
  struct Handle;
  std::unique_ptr<Handle> handle_;
};

class Convolution {
 public:
  // Chooses cuDNN's fastest algorithms (by its heuristics) whose workspace
  // fits in `workspace_limit` bytes.
  Convolution(Dnn& dnn, const ConvGeometry& g, size_t workspace_limit = size_t{256} << 20);
  ~Convolution();
  Convolution(const Convolution&) = delete;
  Convolution& operator=(const Convolution&) = delete;

  // Device bytes that forward/backward need as `workspace`.
  size_t workspace_bytes() const;
  // y = conv(x, w) (no bias).
  void forward(const float* x, const float* w_ohwi, float* y, void* workspace);
  // dx = the input gradient (overwritten).
  void backward_data(const float* dy, const float* w_ohwi, float* dx, void* workspace);
  // dw = the kernel gradient in OHWI (overwritten).
  void backward_filter(const float* x, const float* dy, float* dw_ohwi, void* workspace);

 private:
  struct Descriptors;
  // x itself, or its copy padded at the bottom/right at the workspace's start.
  const float* input(const float* x, char* workspace) const;
  Dnn& dnn_;
  ConvGeometry g_;
  std::unique_ptr<Descriptors> d_;
};

// Kernel layouts: HWIO (Keras) <-> OHWI (cuDNN NHWC filters).
void hwio_to_ohwi(const float* hwio, float* ohwi, int64_t kh, int64_t kw, int64_t c, int64_t co);
void ohwi_to_hwio(const float* ohwi, float* hwio, int64_t kh, int64_t kw, int64_t c, int64_t co);
// x (n, h, w, c) into xp (n, h + extra_h, w + extra_w, c), zeros at the bottom/right.
void pad_bottom_right(const float* x, float* xp, int64_t n, int64_t h, int64_t w, int64_t c,
                      int64_t extra_h, int64_t extra_w);
// The inverse: the top-left (h, w) of each padded image.
void crop_bottom_right(const float* xp, float* x, int64_t n, int64_t h, int64_t w, int64_t c,
                       int64_t extra_h, int64_t extra_w);

}  // namespace drun::kernels::cuda
