// The CPU side of every op of kernels/op_list.hpp: on_cpu::<op>, declared
// here from the list and defined in cpu/ops_cpu.cpp over the kernels of
// kernels/cpu/. ops.cpp calls one after the op's checks, where the op runs on
// the CPU; the GPU's side is the backend's (kernels/gpu_backend.hpp). An op
// without its CPU side does not link.
#pragma once
#include <cstdint>

#include "kernels/ops.hpp"

namespace drun::kernels::on_cpu {

#define DRUN_OP(ret, name, params, args, device, checks) ret name params;
#include "kernels/op_list.hpp"
#undef DRUN_OP

}  // namespace drun::kernels::on_cpu
