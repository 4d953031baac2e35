// CIFAR-10 (Krizhevsky 2009) in its binary format: data_batch_1..5.bin and
// test_batch.bin, each a run of 3,073-byte records: one label byte (0..9), then
// the 32x32 red, green and blue planes (1,024 bytes each, row by row). Read
// into NHWC float tensors. CIFAR-10 cannot be downloaded on a cluster node
// without internet access, so a missing directory gets a message saying where
// to put the files.
#pragma once
#include <string>

#include "data/dataset.hpp"

namespace drun::data {

inline constexpr int64_t kCifar10RecordBytes = 3073;
inline constexpr int kCifar10Classes = 10;

// split "train" (data_batch_1..5.bin) or "test" (test_batch.bin), from `dir`
// (else $DRUN_DATA_DIR), or its subfolder cifar-10-batches-bin (the
// official archive's). x is float32 (N, 32, 32, 3) with raw values 0..255,
// y int32 (N). With shard_count > 1 only this worker's contiguous part is
// read: records [k * T/W, (k+1) * T/W) of the split's T records (every shard
// floor(T/W) long), and the data set is marked as sharded already.
// Throws UsageError naming the file for a missing, truncated or corrupt one.
Dataset load_cifar10(const std::string& split, const std::string& dir = "", int64_t shard_count = 1,
                     int64_t shard_index = 0);

}  // namespace drun::data
