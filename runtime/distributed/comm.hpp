// Communicator: the only code that calls MPI. Strategies, parameter servers
// and the trainer use it for collectives (broadcasts, non-blocking sums),
// point-to-point messages, node-shared memory and aborts. The world
// communicator owns MPI's lifetime (MPI_Init in the constructor, MPI_Finalize
// in the destructor); split() gives sub-communicators (e.g. the workers
// without the parameter servers) that only free their MPI group.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace drun::distributed {

// Whether this process was started as a rank of an MPI job (Open MPI's
// mpirun or a scheduler's launcher).
bool in_mpi_job();

class SharedWindow;

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

  // Collective: the ranks passing the same color form a new communicator,
  // ranked in this one's order.
  std::unique_ptr<Communicator> split(int color) const;
  // Collective: the ranks on this one's node (sharing memory).
  std::unique_ptr<Communicator> split_node() const;
  // Collective: every rank's value, in rank order.
  std::vector<int> allgather(int value) const;

  void barrier();
  void broadcast(float* data, int64_t n, int root);
  void broadcast(std::string& text, int root);
  // Sums in place over all ranks.
  void allreduce_sum(float* data, int64_t n);
  void allreduce_sum(double* data, int64_t n);
  void allreduce_max(double* data, int64_t n);

  // Non-blocking operations; test() advances one, wait_all() finishes all.
  using Request = int;  // index into the request slots
  Request allreduce_sum_start(float* data, int64_t n);
  Request send_start(const float* data, int64_t n, int dest, int tag);
  Request recv_start(float* data, int64_t n, int source, int tag);
  Request send_start(const int64_t* data, int n, int dest, int tag);
  Request recv_start(int64_t* data, int n, int source, int tag);
  bool test(Request r);
  void wait_all();

  // Blocking point-to-point messages.
  void send(const float* data, int64_t n, int dest, int tag);
  void send(const int64_t* data, int n, int dest, int tag);
  void send(const std::string& text, int dest, int tag);
  void recv(float* data, int64_t n, int source, int tag);
  void recv(int64_t* data, int n, int source, int tag);
  std::string recv_text(int source, int tag);
  // Receives from whichever rank sends first; returns that rank.
  int recv_any(int64_t* data, int n, int tag);

  // Ends every rank of the job at once with this exit code.
  [[noreturn]] void abort(int code);

 private:
  friend class SharedWindow;
  struct Impl;  // the MPI_Comm and request handles; only comm.cpp includes mpi.h
  Communicator(std::unique_ptr<Impl> impl);
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  bool owns_mpi_ = false;
  std::unique_ptr<Impl> impl_;
};

// Memory shared by the ranks of one node (MPI_Win_allocate_shared): rank
// `owner` of `node` allocates `floats` floats, every rank gets a pointer to
// them. Construction and release() are collective over `node`; release()
// must be called before the communicator goes.
class SharedWindow {
 public:
  SharedWindow(Communicator& node, int owner, int64_t floats);
  ~SharedWindow();
  SharedWindow(const SharedWindow&) = delete;
  SharedWindow& operator=(const SharedWindow&) = delete;
  float* data() const { return data_; }
  // Makes this rank's stores visible to the others and theirs to it; with a
  // barrier of the node around it, the MPI-3 pattern for shared windows.
  void sync();
  void release();

 private:
  struct Handle;
  std::unique_ptr<Handle> handle_;
  float* data_ = nullptr;
};

}  // namespace drun::distributed
