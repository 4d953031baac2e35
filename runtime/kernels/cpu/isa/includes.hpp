// What kernels_impl.hpp uses, included before an ISA file's `#pragma GCC
// target` so that these headers' inline code stays at the build's target.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "kernels/cpu/conv2d_winograd.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/masked_softmax.hpp"
#include "kernels/pool_window.hpp"
#include "kernels/recurrent.hpp"
