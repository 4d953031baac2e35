// Allreduce across nodes in three phases (the hierarchical allreduce of
// Horovod and of IBM's DDL): the workers of a node first sum through
// node-shared memory, each worker one 1/L slice of the range (L workers per
// node); each worker then sums its slice with the workers of the same local
// rank on the other nodes (one non-blocking MPI allreduce per slice on a
// communicator of those workers), so each value crosses the network once per
// node rather than once per worker and all L workers of a node use the
// network at once; last, every worker copies the other slices from the
// workers that own them. Ranges are started as backward produces them (one
// per fusion bucket) and finished together.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "distributed/comm.hpp"

namespace drun::distributed {

class HierarchicalAllreduce {
 public:
  // Whether `workers` spans several nodes with the same number (> 1) of
  // workers on each; collective.
  static bool applies(Communicator& workers);
  // Collective over `workers` (where applies() holds): segments of `floats`
  // floats each.
  HierarchicalAllreduce(Communicator& workers, int64_t floats);
  ~HierarchicalAllreduce();
  HierarchicalAllreduce(const HierarchicalAllreduce&) = delete;
  HierarchicalAllreduce& operator=(const HierarchicalAllreduce&) = delete;

  int nodes() const { return cross_->size(); }
  // This worker's segment: where its values go before start().
  float* segment() const;
  // Collective, in the same order on every worker: sums [offset, offset + n)
  // of the node's segments into this worker's slice and starts that slice's
  // sum across nodes.
  void start(int64_t offset, int64_t n);
  // Lets MPI advance the cross-node sums already started.
  void progress();
  // Collective: waits for every started range; then every worker's segment
  // holds the sum over all workers of each started range.
  void finish();

 private:
  struct Slice {
    int64_t begin = 0, end = 0;
  };
  Slice slice_of(int64_t offset, int64_t n, int local_rank) const;

  std::unique_ptr<Communicator> node_;   // the workers of this node
  std::unique_ptr<Communicator> cross_;  // the workers of this local rank, one per node
  int64_t stride_;                       // floats per segment, padded
  SharedWindow window_;
  struct Range {
    int64_t offset, n;
    Communicator::Request request;
  };
  std::vector<Range> started_;
};

}  // namespace drun::distributed
