#include "train/job.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/cpu/gemm.hpp"
#include "launch/placement.hpp"
#include "train/preemption.hpp"

namespace drun::train {

namespace {

// Beyond any machine's cores: a bigger DRUN_THREADS is a typing mistake.
constexpr long kMostThreads = 1 << 16;

std::string hostname() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// A rank of a job the launcher started: its stall inspector, when the
// launcher asked for one (DRUN_STALL_DIR, DRUN_STALL_TIMEOUT > 0).
std::unique_ptr<distributed::StallInspector> start_stall_inspector(
    const Context& ctx, const distributed::Communicator& comm) {
  const char* dir = std::getenv("DRUN_STALL_DIR");
  const char* timeout = std::getenv("DRUN_STALL_TIMEOUT");
  if (!dir || !*dir || !timeout || comm.size() < 2) return nullptr;
  const double seconds = std::atof(timeout);
  if (seconds <= 0) return nullptr;
  distributed::Heartbeat me;
  me.rank = comm.rank();
  me.host = hostname();
  me.role = ctx.role;
  me.task_index = ctx.task_index;
  return std::make_unique<distributed::StallInspector>(dir, seconds, me);
}

}  // namespace

int requested_threads(int flag, const char* env) {
  if (flag > 0) return flag;
  if (!env || !*env) return 0;
  const std::string text = env;
  if (text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos ||
      std::stol(text) > kMostThreads)
    throw UsageError(
        "DRUN_THREADS: expected a whole number of threads (0: the node's cores "
        "shared by its ranks), got '" +
        text + "'");
  return static_cast<int>(std::stol(text));
}

int thread_count(int flag, const char* env, int placed, int cores, int ranks_on_node) {
  if (const int asked = requested_threads(flag, env); asked > 0) return asked;
  if (placed > 0) return placed;
  return launch::cores_per_rank(cores, ranks_on_node);
}

int visible_gpu(int placed, const char* cuda_visible_devices) {
  if (placed < 0 || !cuda_visible_devices) return placed;
  return launch::count_visible_devices(cuda_visible_devices) == 1 ? 0 : placed;
}

int take_role(Context& ctx, int rank, int size, int local_rank) {
  std::vector<launch::RankInfo> ranks;
  int placed = 0;
  if (const char* table = std::getenv("DRUN_PLACEMENT")) {
    ranks = launch::placement_from_text(table);
    if (static_cast<int>(ranks.size()) != size)
      throw UsageError("DRUN_PLACEMENT has " + std::to_string(ranks.size()) +
                       " ranks but the job has " + std::to_string(size));
    placed = ranks[static_cast<size_t>(rank)].threads;
  } else {  // started by hand (mpirun or jsrun drun ...): every rank a worker
    const int gpus = kernels::cuda_device_count();
    for (int i = 0; i < size; ++i)
      ranks.push_back({i, "localhost", 0, i == 0 ? "chief" : "worker", i == 0 ? 0 : i - 1,
                       i == rank && gpus > 0 ? local_rank % gpus : -1, ctx.exec.threads});
  }
  const auto& me = ranks[static_cast<size_t>(rank)];
  ctx.role = me.role;
  ctx.task_index = me.task_index;
  ctx.gpu = visible_gpu(me.gpu, std::getenv("CUDA_VISIBLE_DEVICES"));
  ctx.tf_config = launch::tf_config(ranks, rank);
  if (me.role != "chief")
    ctx.label =
        "rank " + std::to_string(rank) + ", " + me.role + " " + std::to_string(me.task_index);
  setenv("TF_CONFIG", ctx.tf_config.dump().c_str(), 1);
  setenv("DRUN_ROLE", me.role.c_str(), 1);
  setenv("DRUN_TASK_INDEX", std::to_string(me.task_index).c_str(), 1);
  return placed;
}

void choose_device(Context& ctx, const std::string& device) {
  if (device != "auto" && device != "cpu" && device != "cuda")
    throw UsageError("device '" + device + "': expected auto, cpu or cuda");
  if (device == "cpu" || ctx.role == "ps" || ctx.role == "evaluator") return;
  const int gpus = kernels::cuda_device_count();
  if (ctx.gpu < 0 && !ctx.comm && gpus > 0) ctx.gpu = 0;
  if (device == "cuda" && (ctx.gpu < 0 || ctx.gpu >= gpus))
    throw UsageError("--device cuda: " +
                     std::string(!kernels::cuda_built() ? "this drun was built without CUDA"
                                 : gpus == 0            ? "no GPU found"
                                                        : "this rank was placed on no GPU (GPU " +
                                                   std::to_string(ctx.gpu) + " of " +
                                                   std::to_string(gpus) + ")"));
  if (ctx.gpu < 0 || ctx.gpu >= gpus) return;
  ctx.cuda = kernels::make_cuda_context(ctx.gpu);
  ctx.exec.device = Device::cuda;
  ctx.exec.gpu = ctx.cuda.get();
}

Process::Process(int* argc, char*** argv, const Settings& settings) {
  const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  ctx_.data_dir = settings.data_dir;
  if (ctx_.data_dir.empty())
    if (const char* env = std::getenv("DRUN_DATA_DIR")) ctx_.data_dir = env;
  const char* tty = std::getenv("DRUN_TTY");  // set by the launcher for its ranks
  ctx_.tty = tty ? std::string(tty) == "1" : isatty(STDOUT_FILENO) != 0;
  ctx_.quiet = settings.quiet;
  kernels::cpu::blas_init_single_threaded();
  // A scheduler's warning signal must never kill a rank that has not reached
  // its training loop (or never will: servers).
  if (settings.preemption_from_start) install_preemption_handlers();
  try {
    const char* env_threads = std::getenv("DRUN_THREADS");
    if (settings.evaluator) {
      act_as_evaluator();  // beside a job, on few cores: one thread unless asked
      ctx_.exec.threads = thread_count(settings.threads, env_threads, 1, cores, 1);
    } else if (settings.join_mpi && distributed::in_mpi_job()) {
      join_job(argc, argv, settings);
    } else {
      ctx_.exec.threads = thread_count(settings.threads, env_threads, 0, cores, 1);
    }
    choose_device(ctx_, settings.device);
  } catch (const std::exception& e) {
    if (!comm_ || comm_->size() < 2) throw;
    // The other ranks would wait for this one in their first collective.
    std::fprintf(stderr, "drun: %s%s\n", ctx_.label.empty() ? "" : (ctx_.label + ": ").c_str(),
                 e.what());
    std::fflush(stderr);
    comm_->abort(1);
  }
}

void Process::join_job(int* argc, char*** argv, const Settings& settings) {
  comm_ = std::make_unique<distributed::Communicator>(argc, argv);
  ctx_.comm = comm_.get();
  const int placed = take_role(ctx_, comm_->rank(), comm_->size(), comm_->local_rank());
  ctx_.exec.threads =
      thread_count(settings.threads, std::getenv("DRUN_THREADS"), placed,
                   static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), comm_->local_size());
  inspector_ = start_stall_inspector(ctx_, *comm_);
  workers_ = comm_->split(ctx_.role == "ps" ? 1 : 0);
  ctx_.workers = workers_.get();
  if (ctx_.role != "chief") ctx_.quiet = true;  // only the chief draws progress
}

// TensorFlow's evaluator task sits outside the cluster it evaluates.
void Process::act_as_evaluator() {
  ctx_.role = "evaluator";
  ctx_.label = "evaluator";
  ctx_.tf_config = {{"cluster", json::object()}, {"task", {{"type", "evaluator"}, {"index", 0}}}};
  setenv("TF_CONFIG", ctx_.tf_config.dump().c_str(), 1);
  setenv("DRUN_ROLE", "evaluator", 1);
}

int Process::finish(int exit_code) {
  if (exit_code != 0 && exit_code != kPreemptedExitCode && comm_ && comm_->size() > 1) {
    inspector_.reset();  // its heartbeat goes with it: abort runs no destructor
    comm_->abort(exit_code);
  }
  return exit_code;
}

// The stall inspector stops first, then the workers' communicator goes
// before the world's, which finalizes MPI.
Process::~Process() {
  ctx_.workers = nullptr;
  ctx_.comm = nullptr;
  inspector_.reset();
  workers_.reset();
  comm_.reset();
}

}  // namespace drun::train
