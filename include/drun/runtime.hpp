// drun's public C++ API (libdrun): the run context. One Runtime per process,
// created first and kept alive while models train. Started as a rank of an
// MPI job (mpirun, srun), it joins the job (MPI_Init) and takes its role:
// worker 0 is the chief, which alone should write files; alone, the process
// is the chief of a one-worker job.
#pragma once
#include <memory>
#include <string>

namespace drun {

struct RuntimeSettings {
  int threads = 0;             // 0: DRUN_THREADS, else the node's cores shared by its ranks
  bool quiet = false;          // no progress output
  std::string device = "cpu";  // where models compute: cpu, auto (this process's GPU where it
                               // has one, as drun --device auto) or cuda (drun::Error without)
};

class Runtime {
 public:
  // argc and argv as main received them (MPI may read and edit them).
  Runtime(int& argc, char**& argv, const RuntimeSettings& settings = {});
  explicit Runtime(const RuntimeSettings& settings = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int rank() const;                 // this process's rank in the job (0 alone)
  int workers() const;              // the job's workers (1 alone)
  const std::string& role() const;  // chief, worker or ps
  bool is_chief() const { return role() == "chief"; }
  int threads() const;

  struct Impl;  // the runtime's side (bindings/cpp)

 private:
  friend class Model;
  Impl& impl() const { return *impl_; }
  std::unique_ptr<Impl> impl_;
};

}  // namespace drun
