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
#include "tensor/dtype.hpp"

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
  // fits in `workspace_limit` bytes. `dtype` is the element type of x, w and
  // y: float32 with float32 arithmetic (no TF32, as the CPU reference), or
  // float16 / bfloat16 on the tensor cores with float32 accumulation.
  Convolution(Dnn& dnn, const ConvGeometry& g, DType dtype = DType::f32,
              size_t workspace_limit = size_t{256} << 20);
  ~Convolution();
  Convolution(const Convolution&) = delete;
  Convolution& operator=(const Convolution&) = delete;

  // Device bytes that forward/backward need as `workspace`.
  size_t workspace_bytes() const;
  // Tensors of the plan's element type, device pointers.
  // y = conv(x, w) (no bias).
  void forward(const void* x, const void* w_ohwi, void* y, void* workspace);
  // dx = the input gradient (overwritten).
  void backward_data(const void* dy, const void* w_ohwi, void* dx, void* workspace);
  // dw = the kernel gradient in OHWI (overwritten).
  void backward_filter(const void* x, const void* dy, void* dw_ohwi, void* workspace);

 private:
  struct Descriptors;
  // x itself, or its copy padded at the bottom/right at the workspace's start.
  const void* input(const void* x, char* workspace) const;
  Dnn& dnn_;
  ConvGeometry g_;
  size_t element_bytes_;
  std::unique_ptr<Descriptors> d_;
};

// Kernel layouts: HWIO (Keras) <-> OHWI (cuDNN NHWC filters), of elements
// of `element_bytes` (4: float32, 2: float16 or bfloat16; moved, not converted).
void hwio_to_ohwi(const void* hwio, void* ohwi, int64_t kh, int64_t kw, int64_t c, int64_t co,
                  size_t element_bytes = 4);
void ohwi_to_hwio(const void* ohwi, void* hwio, int64_t kh, int64_t kw, int64_t c, int64_t co,
                  size_t element_bytes = 4);
// A convolution's output, in one pass: y = relu?(f32(x) + bias) for x of
// (rows, cols) in `type` (float32: x may be y), bias null for none; the
// float operations of a cast, bias_add and ReLU one after the other.
void conv_epilogue(const void* x, DType type, float* y, const float* bias, bool relu, int64_t rows,
                   int64_t cols);
// x (n, h, w, c) into xp (n, h + extra_h, w + extra_w, c), zeros at the bottom/right.
void pad_bottom_right(const void* x, void* xp, int64_t n, int64_t h, int64_t w, int64_t c,
                      int64_t extra_h, int64_t extra_w, size_t element_bytes = 4);
// The inverse: the top-left (h, w) of each padded image.
void crop_bottom_right(const void* xp, void* x, int64_t n, int64_t h, int64_t w, int64_t c,
                       int64_t extra_h, int64_t extra_w, size_t element_bytes = 4);

}  // namespace drun::kernels::cuda
