#include "command_line.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <type_traits>

#include "base/did_you_mean.hpp"
#include "kernels/platform.hpp"
#include "runner.hpp"

#ifndef DRUN_VERSION
#define DRUN_VERSION "unknown"
#endif

namespace drun::cli {

const std::vector<Option>& options() {
  static const std::vector<Option> table = {
      {.names = "--threads,--threads-per-rank",
       .field = &Request::threads,
       .help = "threads for each process (default: the node's cores shared by its ranks)",
       .check = Check::count_from_0,
       .to_ranks = true},
      {.names = "--data-dir",
       .field = &Request::data_dir,
       .help = "where data sets are read from (or DRUN_DATA_DIR)",
       .to_ranks = true},
      {.names = "-q,--quiet",
       .field = &Request::quiet,
       .help = "no progress output",
       .to_ranks = true},
      {.names = "--device",
       .field = &Request::device,
       .help = "where workers compute: auto (each worker's GPU where it has one), cpu or cuda",
       .check = Check::choice,
       .choices = {"auto", "cpu", "cuda"},
       .to_ranks = true},
      {.names = "-n,--np",
       .field = &Request::ranks,
       .help = "workers in all (-np N as with mpirun)",
       .check = Check::count_from_1,
       .mpirun_name = "-np"},
      {.names = "--hostfile",
       .field = &Request::hostfile,
       .help = "nodes to run on (Open MPI hostfile format)"},
      {.names = "--workers-per-node",
       .field = &Request::workers_per_node,
       .help = "workers on each node (default: the tasks asked of the scheduler less the servers "
               "there, else one per GPU, else 1)"},
      {.names = "--gpus-per-node",
       .field = &Request::gpus_per_node,
       .help = "GPUs on each node (default: CUDA_VISIBLE_DEVICES, the scheduler, or 0)"},
      {.names = "--ps-per-node",
       .field = &Request::ps_per_node,
       .help = "parameter servers on each node (default: 1 when the strategy uses them)"},
      {.names = "--ps",
       .field = &Request::ps,
       .help = "parameter servers in all, spread over the nodes like -np (instead of "
               "--ps-per-node)",
       .check = Check::count_from_0},
      {.names = "--evaluator",
       .field = &Request::evaluator,
       .help = "run as the evaluator of a training job: evaluate each new checkpoint in the "
               "script's model_dir until the training is over (one process, beside the job)"},
      {.names = "--dry-run",
       .field = &Request::dry_run,
       .help = "print strategy, model, placement and TF_CONFIG, and start nothing"},
      {.names = "--mpirun", .field = &Request::mpirun, .help = "the mpirun to start ranks with"},
      {.names = "--launcher",
       .field = &Request::launcher,
       .help = "what starts the ranks: auto (srun --mpi=pmix inside a Slurm allocation, jsrun "
               "inside an LSF one, else mpirun), srun, jsrun or mpirun",
       .check = Check::choice,
       .choices = {"auto", "srun", "jsrun", "mpirun"}},
      {.names = "--max-restarts",
       .field = &Request::max_restarts,
       .help = "when a rank dies, restart the job from the newest checkpoint up to N times "
               "(default 0: the job ends)",
       .check = Check::count_from_0},
      {.names = "--min-workers",
       .field = &Request::min_workers,
       .help = "with --max-restarts: when a node is lost (its ranks died or fell silent), "
               "restart on the nodes left, re-placed and re-sharded, while at least N workers "
               "remain (default: restart on the same nodes)",
       .check = Check::count_from_1},
      {.names = "--stall-timeout",
       .field = &Request::stall_timeout,
       .help = "seconds a rank may wait in an exchange for a rank that has fallen silent "
               "(stopped, frozen) before that rank is named and the job ends (default 60; 0: "
               "never)",
       .check = Check::non_negative},
      // Every rank's fits write into the one trace: the ranks are told where.
      {.names = "--timeline",
       .field = &Request::timeline,
       .help = "write a Chrome trace (Perfetto, chrome://tracing) of every fit: each rank's "
               "layers, exchanges, waits, input and updates (docs/timeline.md)",
       .to_ranks = true},
      {.names = "--mpi-arg",
       .field = &Request::mpi_args,
       .help = "an argument passed through to mpirun or srun (repeatable)"},
  };
  return table;
}

namespace {

std::vector<std::string> names_of(const Option& o) {
  std::vector<std::string> names;
  std::stringstream in(o.names);
  for (std::string name; std::getline(in, name, ',');) names.push_back(name);
  return names;
}

// The name an option goes by when drun writes it: its first long one.
std::string long_name(const Option& o) {
  const auto names = names_of(o);
  const auto it = std::find_if(names.begin(), names.end(),
                               [](const std::string& n) { return n.rfind("--", 0) == 0; });
  return it != names.end() ? *it : names.front();
}

bool takes_value(const Option& o) {
  return !std::holds_alternative<bool Request::*>(o.field);
}

// Whether `arg` is one of drun's options that take a separate value.
bool takes_value(const std::string& arg) {
  for (const auto& o : options()) {
    if (!takes_value(o)) continue;
    const auto names = names_of(o);
    if (arg == o.mpirun_name || std::find(names.begin(), names.end(), arg) != names.end())
      return true;
  }
  return false;
}

// A count given on the command line: a whole number of at least `least`
// (CLI11's own number checks print the range of a double).
CLI::Validator count_of_at_least(int least) {
  return CLI::Validator(
      [least](std::string& value) -> std::string {
        size_t used = 0;
        long n = 0;
        try {
          n = std::stol(value, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == value.size() && !value.empty() && n >= least) return "";
        return "expected a whole number of at least " + std::to_string(least) + ", got '" + value +
               "'";
      },
      "N");
}

void add_check(CLI::Option* added, const Option& o) {
  switch (o.check) {
    case Check::any:
      return;
    case Check::count_from_0:
      added->check(count_of_at_least(0));
      return;
    case Check::count_from_1:
      added->check(count_of_at_least(1));
      return;
    case Check::non_negative:
      added->check(CLI::NonNegativeNumber);
      return;
    case Check::choice:
      added->check(CLI::IsMember(o.choices));
      return;
  }
}

void add_options(CLI::App& app, Request& req) {
  app.footer(
      "subcommands:\n"
      "  inspect MODEL.h5     what a Keras HDF5 model file holds (drun inspect --help)\n"
      "  help [NAME]          the layers, strategies... drun has; NAME's options\n\n"
      "script.lua --help lists the script's own options.");
  app.set_version_flag("--version", [] {
    return "drun " DRUN_VERSION "\n" + kernels::platform_text() + "lua: " + lua::interpreter() +
           "\n";
  });
  for (const auto& o : options()) {
    std::visit(
        [&](auto field) {
          if constexpr (std::is_same_v<decltype(field), bool Request::*>)
            app.add_flag(o.names, req.*field, o.help);
          else
            add_check(app.add_option(o.names, req.*field, o.help), o);
        },
        o.field);
  }
  app.add_option("script", req.script, "the experiment, a Lua file")->required();
}

// A value as the command line spells it.
std::string text_of(int v) {
  return std::to_string(v);
}
std::string text_of(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}
std::string text_of(const std::string& v) {
  return v;
}

void pass_on(std::vector<std::string>& out, const std::string& name, bool value, bool fallback) {
  if (value != fallback) out.push_back(name + (value ? "" : "=false"));
}
void pass_on(std::vector<std::string>& out, const std::string& name,
             const std::vector<std::string>& values, const std::vector<std::string>&) {
  for (const auto& v : values) out.insert(out.end(), {name, v});
}
template <class T>
void pass_on(std::vector<std::string>& out, const std::string& name, const T& value,
             const T& fallback) {
  if (value != fallback) out.insert(out.end(), {name, text_of(value)});
}

// " (did you mean --threads?)" for the first of drun's arguments that is no
// option of drun's but nearly one (CLI11 suggests nothing), else "".
std::string near_miss(const std::vector<std::string>& args) {
  std::vector<std::string> known = {"--help", "--version"};
  for (const auto& o : options())
    for (const auto& n : names_of(o))
      if (n.rfind("--", 0) == 0) known.push_back(n);
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string name = args[i].substr(0, args[i].find('='));
    if (name.rfind("--", 0) != 0 || name == "--") continue;
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    const std::string best = closest_name(name, known);
    if (!best.empty()) return " (did you mean " + best + "?)";
  }
  return "";
}

}  // namespace

int script_position(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") return i + 1 < argc ? i + 1 : argc;
    if (a.empty() || a[0] != '-' || a == "-") return i;
    if (takes_value(a)) ++i;  // `--name=value` carries its own
  }
  return argc;
}

std::optional<int> parse(int argc, char** argv, Request& req) {
  CLI::App app{"drun: distributed deep-learning training from Lua experiment scripts", "drun"};
  add_options(app, req);
  const int script_at = script_position(argc, argv);
  for (int i = script_at + 1; i < argc; ++i) req.script_args.emplace_back(argv[i]);
  // drun parses only the arguments up to the script, in CLI11's spelling.
  std::vector<std::string> own(argv, argv + std::min(argc, script_at + 1));
  for (auto& a : own)
    for (const auto& o : options())
      if (!o.mpirun_name.empty() && a == o.mpirun_name) a = long_name(o);
  std::vector<char*> own_argv;
  for (auto& a : own) own_argv.push_back(a.data());
  try {
    app.parse(static_cast<int>(own_argv.size()), own_argv.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, as for a script's own options: what was wrong, and where to look.
    std::cerr << "drun: " << e.what() << near_miss(own) << " (drun --help lists the options)\n";
    return lua::kUsageExitCode;
  }
  // Going on without a node is a kind of restart: it draws on their budget.
  if (req.min_workers > 0 && req.max_restarts == 0) {
    std::cerr << "drun: --min-workers " << req.min_workers
              << " needs --max-restarts N (N >= 1) (drun --help lists the options)\n";
    return lua::kUsageExitCode;
  }
  if (!std::filesystem::exists(req.script)) {
    std::cerr << "drun: no such script: " << req.script << "\n";
    return lua::kUsageExitCode;
  }
  // As the ranks of a job will need them, wherever and however mpirun starts
  // them: DRUN_DATA_DIR as --data-dir, the trace's path absolute.
  if (req.data_dir.empty())
    if (const char* env = std::getenv("DRUN_DATA_DIR")) req.data_dir = env;
  if (!req.timeline.empty()) req.timeline = std::filesystem::absolute(req.timeline).string();
  return std::nullopt;
}

std::vector<std::string> rank_arguments(const Request& req) {
  static const Request defaults;
  std::vector<std::string> out;
  for (const auto& o : options())
    if (o.to_ranks)
      std::visit([&](auto field) { pass_on(out, long_name(o), req.*field, defaults.*field); },
                 o.field);
  return out;
}

}  // namespace drun::cli
