// Communicator: the only code that calls MPI. Strategies and the trainer use
// it for broadcasts, (non-blocking) sums and aborts; it owns MPI's lifetime
// (MPI_Init in the constructor, MPI_Finalize in the destructor).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace drun::dist {

// Whether this process was started as a rank of an MPI job (Open MPI's
// mpirun or a scheduler's launcher).
bool in_mpi_job();

class Communicator {
 public:
  Communicator(int* argc, char*** argv);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  std::string host() const;

  void barrier();
  void broadcast(float* data, int64_t n, int root);
  void broadcast(std::string& text, int root);
  // Sums in place over all ranks.
  void allreduce_sum(float* data, int64_t n);
  void allreduce_sum(double* data, int64_t n);

  // A non-blocking in-place sum; test() advances it, wait() finishes it.
  using Request = int;  // index into requests_
  Request allreduce_sum_start(float* data, int64_t n);
  bool test(Request r);
  void wait_all();

  // Ends every rank of the job at once with this exit code.
  [[noreturn]] void abort(int code);

 private:
  struct Requests;  // MPI_Request handles; only comm.cpp includes mpi.h
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::unique_ptr<Requests> requests_;
};

}  // namespace drun::dist
