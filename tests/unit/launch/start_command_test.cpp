// The command that starts the ranks: mpirun's and srun's argv from a role
// table, and when drun picks which.
#include "launch/start_command.hpp"

#include <gtest/gtest.h>

#include "usage_error.hpp"

namespace drun::launch {
namespace {

using drun::testing::expect_usage_error;
using Strings = std::vector<std::string>;

// 1 ps + 2 workers over two nodes, as `drun --ps 1` in `sbatch -N 2 -n 3`.
std::vector<RankInfo> three_ranks() {
  return {{0, "nodea", 0, "ps", 0, -1, 1},
          {1, "nodea", 0, "chief", 0, -1, 1},
          {2, "nodeb", 1, "worker", 0, -1, 2}};
}

ClusterSpec slurm_cluster() {
  return ClusterSpec{"slurm", {Node{"nodea"}, Node{"nodeb"}}};
}

TEST(StartCommand, SrunPlacesEveryRankOnItsHost) {
  StartOptions o;
  o.program = "srun";
  o.tasks_granted = 3;
  EXPECT_EQ(start_command(Starter::srun, three_ranks(), o),
            (Strings{"srun", "--mpi=pmix", "--ntasks=3", "--distribution=arbitrary",
                     "--nodelist=nodea,nodea,nodeb", "--export=ALL", "--kill-on-bad-exit=1"}));
}

TEST(StartCommand, SrunOvercommitsOnlyBeyondTheGrantedTasks) {
  StartOptions o;
  o.program = "srun";
  o.tasks_granted = 2;
  o.passed = {"--label"};
  Strings cmd = start_command(Starter::srun, three_ranks(), o);
  ASSERT_EQ(cmd.size(), 9u);
  EXPECT_EQ(cmd[7], "--overcommit");
  EXPECT_EQ(cmd[8], "--label");  // --mpi-arg comes last
  o.tasks_granted = 0;           // the allocation said nothing: Slurm judges
  EXPECT_EQ(start_command(Starter::srun, three_ranks(), o).size(), 8u);
}

TEST(StartCommand, MpirunNamesHostsWithCounts) {
  StartOptions o;
  o.passed = {"--mca", "btl", "self,tcp"};
  EXPECT_EQ(start_command(Starter::mpirun, three_ranks(), o), (Strings{"mpirun",
                                                                       "--allow-run-as-root",
                                                                       "--oversubscribe",
                                                                       "--bind-to",
                                                                       "none",
                                                                       "-np",
                                                                       "3",
                                                                       "-x",
                                                                       "DRUN_PLACEMENT",
                                                                       "-x",
                                                                       "DRUN_TTY",
                                                                       "-x",
                                                                       "DRUN_STALL_DIR",
                                                                       "-x",
                                                                       "DRUN_STALL_TIMEOUT",
                                                                       "--host",
                                                                       "nodea:2,nodeb:1",
                                                                       "--mca",
                                                                       "btl",
                                                                       "self,tcp"}));
  o.name_hosts = false;  // this machine alone
  o.passed.clear();
  EXPECT_EQ(start_command(Starter::mpirun, three_ranks(), o).size(), 15u);
}

TEST(StartCommand, AutoTakesSrunOnlyInsideASlurmJobWithSrun) {
  const ClusterSpec slurm = slurm_cluster();
  const ClusterSpec local{"local", {Node{"box"}}};
  EXPECT_EQ(choose_starter("auto", slurm, true, true), Starter::srun);
  EXPECT_EQ(choose_starter("auto", slurm, true, false), Starter::mpirun);
  EXPECT_EQ(choose_starter("auto", slurm, false, true), Starter::mpirun);  // a recorded env
  EXPECT_EQ(choose_starter("auto", local, true, true), Starter::mpirun);
  EXPECT_EQ(choose_starter("mpirun", slurm, true, true), Starter::mpirun);
  EXPECT_EQ(choose_starter("srun", slurm, true, true), Starter::srun);
}

TEST(StartCommand, Errors) {
  const ClusterSpec slurm = slurm_cluster();
  expect_usage_error([&] { choose_starter("srun", slurm, false, true); },
                     {"--launcher srun", "SLURM_JOB_ID"});
  expect_usage_error([&] { choose_starter("srun", slurm, true, false); },
                     {"--launcher srun", "not on PATH"});
  expect_usage_error([&] { choose_starter("ssh", slurm, true, true); },
                     {"--launcher 'ssh'", "auto, srun or mpirun"});
}

}  // namespace
}  // namespace drun::launch
