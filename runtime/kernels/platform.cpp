#include "kernels/platform.hpp"

#include "kernels/cpu/blas_core.hpp"
#include "kernels/cpu/conv2d.hpp"
#include "kernels/cpu/conv2d_winograd.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/ops.hpp"

extern "C" char* openblas_get_config(void);

namespace drun::kernels {

namespace {

std::string conv_engine_text() {
  const auto choice = cpu::conv_engine_choice();
  if (choice == cpu::ConvEngineChoice::im2col)
    return "drun direct (K <= 32; with the max pooling after a first convolution in one pass), "
           "im2col + OpenBLAS SGEMM otherwise (DRUN_CONV=im2col)";
  const std::string w = std::to_string(cpu::cpu_kernels().vec_floats);
  const std::string winograd = choice == cpu::ConvEngineChoice::automatic
                                   ? "drun Winograd F(" +
                                         std::to_string(cpu::conv2d_winograd_tile()) + "x" +
                                         std::to_string(cpu::conv2d_winograd_tile()) +
                                         ",3x3) (3x3 stride 1, channels multiples of " + w +
                                         "; filter gradients from 64 channels in and out), "
                                   : "";
  return "drun direct (K <= 32; with the max pooling after a first convolution in one pass), " +
         winograd +
         "drun implicit GEMM (output channels a multiple of " + w +
         "), im2col + OpenBLAS SGEMM otherwise" +
         (choice == cpu::ConvEngineChoice::implicit ? " (DRUN_CONV=implicit)" : "");
}

}  // namespace

json describe_platform() {
  json variants = json::array();
  for (const cpu::CpuKernels* k : cpu::supported_cpu_kernels()) variants.push_back(k->name);
  const char* blas = openblas_get_config();
  return {{"cpu", cpu::cpu_model_name()},      {"cpu_kernels", cpu::cpu_kernels().name},
          {"cpu_kernels_supported", variants}, {"blas", blas ? blas : "OpenBLAS"},
          {"blas_core", cpu::blas_core()},     {"blas_core_chosen_by", cpu::blas_core_chosen_by()},
          {"conv_engine", conv_engine_text()}, {"cuda_built", cuda_built()}};
}

std::string platform_text() {
  const json p = describe_platform();
  std::string supported;
  for (const auto& v : p["cpu_kernels_supported"])
    supported += (supported.empty() ? "" : ", ") + v.get<std::string>();
  return "cpu: " + p["cpu"].get<std::string>() + "\n" +
         "cpu kernels: " + p["cpu_kernels"].get<std::string>() + " (this CPU runs " + supported +
         "; DRUN_ISA picks one)\n" + "blas: " + p["blas"].get<std::string>() + ", core " +
         p["blas_core"].get<std::string>() + " (chosen by " +
         p["blas_core_chosen_by"].get<std::string>() + ")\n" +
         "convolutions: " + p["conv_engine"].get<std::string>() + "\n" +
         "cuda: " + (p["cuda_built"].get<bool>() ? "built" : "not built") + "\n";
}

}  // namespace drun::kernels
