// A job that lost workers resumes with fewer (drun --min-workers): the epoch
// in progress goes on over the examples that no worker had reached. Every
// worker shuffles the same permutation of an epoch and worker k of W takes
// positions k, k+W, k+2W, ... of it, so after b batches of B examples the W
// workers have consumed positions [0, b*B*W) together; W' workers go on from
// there, worker k at positions P+k, P+k+W', ... (data::Pipeline::seek_from).
// Exact for workers that step together (AllReduce, synchronous servers); an
// asynchronous strategy's workers are at different batches, and the chief's
// stands for all.
#pragma once
#include <cstdint>

#include "train/checkpoint.hpp"

namespace drun::train {

// Where a resumed worker's pipeline goes on.
struct EpochResume {
  int64_t epoch = 0;
  int64_t batch = 0;   // data::Pipeline::seek's batch, when not resharded
  int64_t offset = 0;  // data::Pipeline::seek_from's position, when resharded
  // The checkpoint's workers differ, or its epoch was itself a continued one.
  bool resharded = false;
};

// From checkpoint state `at`, for `workers` workers of per-worker batches of
// `batch_size` over a pass of `pass_size` examples. A checkpoint of the same
// worker count in an ordinary epoch (or one that does not say its workers)
// continues at its batch, exactly as before; any other continues at the
// position its workers had reached together, or at the next epoch when their
// epoch was done.
EpochResume epoch_resume(const TrainingState& at, int workers, int64_t batch_size,
                         int64_t pass_size);

}  // namespace drun::train
