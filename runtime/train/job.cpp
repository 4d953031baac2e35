#include "train/job.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "kernels/cpu/gemm.hpp"
#include "launch/placement.hpp"

namespace drun::train {

void take_role(train::Context& ctx, int rank, int size) {
  std::vector<launch::RankInfo> ranks;
  if (const char* table = std::getenv("DRUN_PLACEMENT")) {
    ranks = launch::placement_from_text(table);
    if (static_cast<int>(ranks.size()) != size)
      throw UsageError("DRUN_PLACEMENT has " + std::to_string(ranks.size()) +
                       " ranks but the job has " + std::to_string(size));
    ctx.exec.threads = ranks[static_cast<size_t>(rank)].threads;
  } else {  // started by hand (mpirun drun ...): every rank a worker
    for (int i = 0; i < size; ++i)
      ranks.push_back({i, "localhost", 0, i == 0 ? "chief" : "worker", i == 0 ? 0 : i - 1, -1,
                       ctx.exec.threads});
  }
  const auto& me = ranks[static_cast<size_t>(rank)];
  ctx.role = me.role;
  ctx.task_index = me.task_index;
  ctx.gpu = me.gpu;
  ctx.tf_config = launch::tf_config(ranks, rank);
  if (me.role != "chief")
    ctx.label =
        "rank " + std::to_string(rank) + ", " + me.role + " " + std::to_string(me.task_index);
  setenv("TF_CONFIG", ctx.tf_config.dump().c_str(), 1);
  setenv("DRUN_ROLE", me.role.c_str(), 1);
  setenv("DRUN_TASK_INDEX", std::to_string(me.task_index).c_str(), 1);
}

EmbeddedProcess::EmbeddedProcess(int* argc, char*** argv, const Settings& settings) {
  const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const char* env_threads = std::getenv("DRUN_THREADS");
  ctx_.exec.threads = settings.threads > 0 ? settings.threads
                      : env_threads        ? std::atoi(env_threads)
                                           : cores;
  ctx_.data_dir = settings.data_dir;
  if (ctx_.data_dir.empty())
    if (const char* env = std::getenv("DRUN_DATA_DIR")) ctx_.data_dir = env;
  ctx_.tty = isatty(STDOUT_FILENO) != 0;
  ctx_.quiet = settings.quiet;
  kernels::cpu::blas_init_single_threaded();
  if (settings.join_mpi && distributed::in_mpi_job()) {
    comm_ = std::make_unique<distributed::Communicator>(argc, argv);
    ctx_.comm = comm_.get();
    if (settings.threads <= 0 && !env_threads)
      ctx_.exec.threads = cores / std::max(1, comm_->local_size());
    take_role(ctx_, comm_->rank(), comm_->size());
    workers_ = comm_->split(ctx_.role == "ps" ? 1 : 0);
    ctx_.workers = workers_.get();
    if (ctx_.role != "chief") ctx_.quiet = true;  // only the chief draws progress
  }
  ctx_.exec.threads = std::max(1, ctx_.exec.threads);
}

// The workers' communicator goes before the world's, which finalizes MPI.
EmbeddedProcess::~EmbeddedProcess() {
  ctx_.workers = nullptr;
  ctx_.comm = nullptr;
  workers_.reset();
  comm_.reset();
}

}  // namespace drun::train
