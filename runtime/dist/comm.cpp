#include "dist/comm.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace drun::dist {

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
}  // namespace

struct Communicator::Requests {
  std::vector<MPI_Request> handles;
};

bool in_mpi_job() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(var)) return true;
  return false;
}

Communicator::Communicator(int* argc, char*** argv) : requests_(std::make_unique<Requests>()) {
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

Communicator::~Communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::string Communicator::host() const {
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  return std::string(name, len);
}

void Communicator::barrier() {
  check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

void Communicator::broadcast(float* data, int64_t n, int root) {
  for (int64_t off = 0; off < n; off += kMaxCount)
    check(MPI_Bcast(data + off, static_cast<int>(std::min(kMaxCount, n - off)), MPI_FLOAT, root,
                    MPI_COMM_WORLD),
          "MPI_Bcast");
}

void Communicator::broadcast(std::string& text, int root) {
  int64_t n = static_cast<int64_t>(text.size());
  check(MPI_Bcast(&n, 1, MPI_INT64_T, root, MPI_COMM_WORLD), "MPI_Bcast");
  text.resize(static_cast<size_t>(n));
  check(MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
}

void Communicator::allreduce_sum(float* data, int64_t n) {
  for (int64_t off = 0; off < n; off += kMaxCount)
    check(MPI_Allreduce(MPI_IN_PLACE, data + off, static_cast<int>(std::min(kMaxCount, n - off)),
                        MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
}

void Communicator::allreduce_sum(double* data, int64_t n) {
  check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce");
}

Communicator::Request Communicator::allreduce_sum_start(float* data, int64_t n) {
  if (n > kMaxCount) throw std::invalid_argument("allreduce_sum_start: bucket too large");
  // Request slots are kept and reused: a warm step allocates nothing.
  auto& h = requests_->handles;
  size_t slot = 0;
  while (slot < h.size() && h[slot] != MPI_REQUEST_NULL) ++slot;
  if (slot == h.size()) h.push_back(MPI_REQUEST_NULL);
  check(MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                       &h[slot]),
        "MPI_Iallreduce");
  return static_cast<Request>(slot);
}

bool Communicator::test(Request r) {
  int done = 0;
  check(MPI_Test(&requests_->handles[static_cast<size_t>(r)], &done, MPI_STATUS_IGNORE),
        "MPI_Test");
  return done != 0;
}

void Communicator::wait_all() {
  auto& h = requests_->handles;
  check(MPI_Waitall(static_cast<int>(h.size()), h.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

void Communicator::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace drun::dist
