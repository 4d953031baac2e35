// Image augmentation as in the ResNet paper and TensorFlow's official CIFAR-10
// model: zero-pad and crop back at a random offset, random left-right flip,
// per-image standardisation ((x - mean) / max(stddev, 1/sqrt(N)), as
// tf.image.per_image_standardization). One example at a time, from the data
// set's row straight into the batch (no scratch memory), with a generator
// seeded by the example's place in the epoch, so runs and resumes repeat.
#pragma once
#include <cstdint>

#include "data/pipeline_spec.hpp"
#include "tensor/shape.hpp"

namespace drun::data {

// Whether the spec asks for any augmentation.
bool augments(const PipelineSpec& spec);

// Writes example `src` (shape h x w x c, before scale/offset) into `dst`,
// scaled, offset and augmented as `spec` says, drawing from a generator seeded
// by (spec.augment_seed, epoch, position).
void augment_example(const PipelineSpec& spec, int64_t h, int64_t w, int64_t c, const float* src,
                     float* dst, int64_t epoch, int64_t position);

}  // namespace drun::data
