#include "distributed/comm.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "distributed/activity.hpp"

namespace drun::distributed {

namespace {
void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(std::string(what) + " failed: " + std::string(text, len));
}

// MPI counts are int: large buffers go in pieces.
constexpr int64_t kMaxCount = int64_t{1} << 30;

int count_of(int64_t n, const char* what) {
  if (n > kMaxCount) throw std::invalid_argument(std::string(what) + ": message too large");
  return static_cast<int>(n);
}
}  // namespace

struct Communicator::Impl {
  MPI_Comm comm = MPI_COMM_WORLD;
  std::vector<MPI_Request> handles;

  // Request slots are kept and reused: a warm step allocates nothing.
  MPI_Request* free_slot(Request& index) {
    size_t slot = 0;
    while (slot < handles.size() && handles[slot] != MPI_REQUEST_NULL) ++slot;
    if (slot == handles.size()) handles.push_back(MPI_REQUEST_NULL);
    index = static_cast<Request>(slot);
    return &handles[slot];
  }
};

bool in_mpi_job() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(var)) return true;
  return false;
}

Communicator::Communicator(int* argc, char*** argv)
    : owns_mpi_(true), impl_(std::make_unique<Impl>()) {
  // Open MPI's non-blocking allreduce defaults to a binomial tree that takes
  // twice as long as the blocking call on two ranks; Rabenseifner's algorithm
  // (3) matches it. A user's own setting wins (no overwrite).
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "3", 0);
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
}

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  MPI_Comm_rank(impl_->comm, &rank_);
  MPI_Comm_size(impl_->comm, &size_);
  MPI_Comm node;
  MPI_Comm_split_type(impl_->comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
}

Communicator::~Communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (!owns_mpi_) {
    MPI_Comm_free(&impl_->comm);
    return;
  }
  MPI_Finalize();
}

std::unique_ptr<Communicator> Communicator::split(int color) const {
  auto impl = std::make_unique<Impl>();
  check(MPI_Comm_split(impl_->comm, color, rank_, &impl->comm), "MPI_Comm_split");
  return std::unique_ptr<Communicator>(new Communicator(std::move(impl)));
}

std::unique_ptr<Communicator> Communicator::split_node() const {
  auto impl = std::make_unique<Impl>();
  check(MPI_Comm_split_type(impl_->comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &impl->comm),
        "MPI_Comm_split_type");
  return std::unique_ptr<Communicator>(new Communicator(std::move(impl)));
}

std::vector<int> Communicator::allgather(int value) const {
  activity::Waiting waiting("MPI_Allgather");
  std::vector<int> all(static_cast<size_t>(size_));
  check(MPI_Allgather(&value, 1, MPI_INT, all.data(), 1, MPI_INT, impl_->comm), "MPI_Allgather");
  return all;
}

std::string Communicator::host() const {
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  return std::string(name, len);
}

void Communicator::barrier() {
  activity::Waiting waiting("MPI_Barrier");
  check(MPI_Barrier(impl_->comm), "MPI_Barrier");
}

void Communicator::broadcast(float* data, int64_t n, int root) {
  activity::Waiting waiting("MPI_Bcast");
  for (int64_t off = 0; off < n; off += kMaxCount)
    check(MPI_Bcast(data + off, static_cast<int>(std::min(kMaxCount, n - off)), MPI_FLOAT, root,
                    impl_->comm),
          "MPI_Bcast");
}

void Communicator::broadcast(std::string& text, int root) {
  activity::Waiting waiting("MPI_Bcast");
  int64_t n = static_cast<int64_t>(text.size());
  check(MPI_Bcast(&n, 1, MPI_INT64_T, root, impl_->comm), "MPI_Bcast");
  text.resize(static_cast<size_t>(n));
  check(MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, root, impl_->comm), "MPI_Bcast");
}

void Communicator::allreduce_sum(float* data, int64_t n) {
  activity::Waiting waiting("MPI_Allreduce");
  for (int64_t off = 0; off < n; off += kMaxCount)
    check(MPI_Allreduce(MPI_IN_PLACE, data + off, static_cast<int>(std::min(kMaxCount, n - off)),
                        MPI_FLOAT, MPI_SUM, impl_->comm),
          "MPI_Allreduce");
}

void Communicator::allreduce_sum(double* data, int64_t n) {
  activity::Waiting waiting("MPI_Allreduce");
  check(
      MPI_Allreduce(MPI_IN_PLACE, data, count_of(n, "allreduce"), MPI_DOUBLE, MPI_SUM, impl_->comm),
      "MPI_Allreduce");
}

void Communicator::allreduce_max(double* data, int64_t n) {
  activity::Waiting waiting("MPI_Allreduce");
  check(
      MPI_Allreduce(MPI_IN_PLACE, data, count_of(n, "allreduce"), MPI_DOUBLE, MPI_MAX, impl_->comm),
      "MPI_Allreduce");
}

Communicator::Request Communicator::allreduce_sum_start(float* data, int64_t n) {
  Request r;
  check(MPI_Iallreduce(MPI_IN_PLACE, data, count_of(n, "allreduce_sum_start"), MPI_FLOAT, MPI_SUM,
                       impl_->comm, impl_->free_slot(r)),
        "MPI_Iallreduce");
  return r;
}

Communicator::Request Communicator::send_start(const float* data, int64_t n, int dest, int tag) {
  Request r;
  check(
      MPI_Isend(data, count_of(n, "send"), MPI_FLOAT, dest, tag, impl_->comm, impl_->free_slot(r)),
      "MPI_Isend");
  return r;
}

Communicator::Request Communicator::recv_start(float* data, int64_t n, int source, int tag) {
  Request r;
  check(MPI_Irecv(data, count_of(n, "recv"), MPI_FLOAT, source, tag, impl_->comm,
                  impl_->free_slot(r)),
        "MPI_Irecv");
  return r;
}

Communicator::Request Communicator::send_start(const int64_t* data, int n, int dest, int tag) {
  Request r;
  check(MPI_Isend(data, n, MPI_INT64_T, dest, tag, impl_->comm, impl_->free_slot(r)), "MPI_Isend");
  return r;
}

Communicator::Request Communicator::recv_start(int64_t* data, int n, int source, int tag) {
  Request r;
  check(MPI_Irecv(data, n, MPI_INT64_T, source, tag, impl_->comm, impl_->free_slot(r)),
        "MPI_Irecv");
  return r;
}

bool Communicator::test(Request r) {
  int done = 0;
  check(MPI_Test(&impl_->handles[static_cast<size_t>(r)], &done, MPI_STATUS_IGNORE), "MPI_Test");
  return done != 0;
}

void Communicator::wait_all() {
  activity::Waiting waiting("MPI_Waitall");
  auto& h = impl_->handles;
  check(MPI_Waitall(static_cast<int>(h.size()), h.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

void Communicator::send(const float* data, int64_t n, int dest, int tag) {
  activity::Waiting waiting("MPI_Send");
  check(MPI_Send(data, count_of(n, "send"), MPI_FLOAT, dest, tag, impl_->comm), "MPI_Send");
}

void Communicator::send(const int64_t* data, int n, int dest, int tag) {
  activity::Waiting waiting("MPI_Send");
  check(MPI_Send(data, n, MPI_INT64_T, dest, tag, impl_->comm), "MPI_Send");
}

void Communicator::send(const std::string& text, int dest, int tag) {
  activity::Waiting waiting("MPI_Send");
  check(MPI_Send(text.data(), count_of(static_cast<int64_t>(text.size()), "send"), MPI_CHAR, dest,
                 tag, impl_->comm),
        "MPI_Send");
}

void Communicator::recv(float* data, int64_t n, int source, int tag) {
  activity::Waiting waiting("MPI_Recv");
  check(MPI_Recv(data, count_of(n, "recv"), MPI_FLOAT, source, tag, impl_->comm, MPI_STATUS_IGNORE),
        "MPI_Recv");
}

void Communicator::recv(int64_t* data, int n, int source, int tag) {
  activity::Waiting waiting("MPI_Recv");
  check(MPI_Recv(data, n, MPI_INT64_T, source, tag, impl_->comm, MPI_STATUS_IGNORE), "MPI_Recv");
}

std::string Communicator::recv_text(int source, int tag) {
  activity::Waiting waiting("MPI_Recv");
  MPI_Status status;
  check(MPI_Probe(source, tag, impl_->comm, &status), "MPI_Probe");
  int n = 0;
  MPI_Get_count(&status, MPI_CHAR, &n);
  std::string text(static_cast<size_t>(n), '\0');
  check(MPI_Recv(text.data(), n, MPI_CHAR, source, tag, impl_->comm, MPI_STATUS_IGNORE),
        "MPI_Recv");
  return text;
}

int Communicator::recv_any(int64_t* data, int n, int tag) {
  activity::Waiting waiting("MPI_Recv (any source)");
  MPI_Status status;
  check(MPI_Recv(data, n, MPI_INT64_T, MPI_ANY_SOURCE, tag, impl_->comm, &status), "MPI_Recv");
  return status.MPI_SOURCE;
}

void Communicator::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

struct SharedWindow::Handle {
  MPI_Win win = MPI_WIN_NULL;
};

SharedWindow::SharedWindow(Communicator& node, int owner, int64_t floats)
    : handle_(std::make_unique<Handle>()) {
  const MPI_Aint bytes = node.rank() == owner ? static_cast<MPI_Aint>(floats) * 4 : 0;
  void* base = nullptr;
  check(MPI_Win_allocate_shared(bytes, 4, MPI_INFO_NULL, node.impl_->comm, &base, &handle_->win),
        "MPI_Win_allocate_shared");
  MPI_Aint size = 0;
  int unit = 0;
  check(MPI_Win_shared_query(handle_->win, owner, &size, &unit, &base), "MPI_Win_shared_query");
  data_ = static_cast<float*>(base);
  // A passive-target epoch for the window's whole life: MPI_Win_sync needs one.
  check(MPI_Win_lock_all(MPI_MODE_NOCHECK, handle_->win), "MPI_Win_lock_all");
}

void SharedWindow::sync() {
  check(MPI_Win_sync(handle_->win), "MPI_Win_sync");
}

// Freeing is collective: a window left behind by an error is left to
// MPI_Abort or MPI_Finalize rather than waiting here for ranks that never come.
SharedWindow::~SharedWindow() = default;

void SharedWindow::release() {
  if (handle_->win == MPI_WIN_NULL) return;
  check(MPI_Win_unlock_all(handle_->win), "MPI_Win_unlock_all");
  check(MPI_Win_free(&handle_->win), "MPI_Win_free");
  data_ = nullptr;
}

}  // namespace drun::distributed
