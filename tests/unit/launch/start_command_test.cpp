// The command that starts the ranks: mpirun's, srun's and jsrun's argv from a
// role table, and when drun picks which.
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

StarterSurroundings slurm_job(bool srun_found) {
  StarterSurroundings at;
  at.in_slurm_job = true;
  at.srun_found = srun_found;
  return at;
}

StarterSurroundings lsf_job(bool jsrun_found) {
  StarterSurroundings at;
  at.in_lsf_job = true;
  at.jsrun_found = jsrun_found;
  return at;
}

TEST(StartCommand, AutoTakesSrunOnlyInsideASlurmJobWithSrun) {
  const ClusterSpec slurm = slurm_cluster();
  const ClusterSpec local{"local", {Node{"box"}}};
  StarterSurroundings recorded;  // a recorded environment: no job, srun found
  recorded.srun_found = true;
  EXPECT_EQ(choose_starter("auto", slurm, slurm_job(true)), Starter::srun);
  EXPECT_EQ(choose_starter("auto", slurm, slurm_job(false)), Starter::mpirun);
  EXPECT_EQ(choose_starter("auto", slurm, recorded), Starter::mpirun);
  EXPECT_EQ(choose_starter("auto", local, slurm_job(true)), Starter::mpirun);
  EXPECT_EQ(choose_starter("mpirun", slurm, slurm_job(true)), Starter::mpirun);
  EXPECT_EQ(choose_starter("srun", slurm, slurm_job(true)), Starter::srun);
}

TEST(StartCommand, AutoTakesJsrunOnlyInsideAnLsfJobWithJsrun) {
  const ClusterSpec lsf{"lsf", {Node{"h1"}, Node{"h2"}}};
  EXPECT_EQ(choose_starter("auto", lsf, lsf_job(true)), Starter::jsrun);
  EXPECT_EQ(choose_starter("auto", lsf, lsf_job(false)), Starter::mpirun);
  EXPECT_EQ(choose_starter("auto", slurm_cluster(), lsf_job(true)), Starter::mpirun);
  EXPECT_EQ(choose_starter("mpirun", lsf, lsf_job(true)), Starter::mpirun);
  EXPECT_EQ(choose_starter("jsrun", lsf, lsf_job(true)), Starter::jsrun);
}

TEST(StartCommand, JsrunReadsTheResourceFile) {
  StartOptions o;
  o.program = "jsrun";
  o.erf_path = "/tmp/x/ranks.erf";
  o.passed = {"--smpiargs=-gpu"};
  EXPECT_EQ(start_command(Starter::jsrun, three_ranks(), o),
            (Strings{"jsrun", "--erf_input", "/tmp/x/ranks.erf", "--smpiargs=-gpu"}));
}

TEST(StartCommand, Errors) {
  const ClusterSpec slurm = slurm_cluster();
  const ClusterSpec lsf{"lsf", {Node{"h1"}}};
  StarterSurroundings nowhere;
  nowhere.srun_found = nowhere.jsrun_found = true;
  expect_usage_error([&] { choose_starter("srun", slurm, nowhere); },
                     {"--launcher srun", "SLURM_JOB_ID"});
  expect_usage_error([&] { choose_starter("srun", slurm, slurm_job(false)); },
                     {"--launcher srun", "not on PATH"});
  expect_usage_error([&] { choose_starter("jsrun", lsf, nowhere); },
                     {"--launcher jsrun", "LSB_JOBID"});
  expect_usage_error([&] { choose_starter("jsrun", lsf, lsf_job(false)); },
                     {"--launcher jsrun", "not on PATH"});
  expect_usage_error([&] { choose_starter("jsrun", slurm, lsf_job(true)); },
                     {"--launcher jsrun", "slurm", "LSB_MCPU_HOSTS"});
  expect_usage_error([&] { choose_starter("ssh", slurm, slurm_job(true)); },
                     {"--launcher 'ssh'", "auto, srun, jsrun or mpirun"});
}

}  // namespace
}  // namespace drun::launch
