// drun's own options, in one table (options()): the command line (CLI11) and
// its --help, where the script starts among the arguments, and what the
// launcher passes on to every rank are all made from it. Everything after
// the script belongs to the script (`drun exp.lua --help` is the script's help).
#pragma once
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "launch.hpp"

namespace drun::cli {

using launch::Request;

// Where an option's value goes: a bool is a flag, anything else takes a value
// (a list: the option may be repeated).
using Field = std::variant<bool Request::*, int Request::*, double Request::*,
                           std::string Request::*, std::vector<std::string> Request::*>;

// What a value must be, checked while parsing.
enum class Check {
  any,
  count_from_0,  // a whole number >= 0
  count_from_1,  // a whole number >= 1
  non_negative,  // a number >= 0
  choice,        // one of `choices`
};

struct Option {
  std::string names{};  // as CLI11 spells them, the long one the canonical: "-n,--np"
  Field field{};
  std::string help{};
  Check check = Check::any;
  std::vector<std::string> choices{};  // Check::choice
  std::string mpirun_name{};           // mpirun's spelling, which CLI11 cannot name: "-np"
  bool to_ranks = false;  // the launcher passes it on to every rank it starts (unless at its
                          // default); the others are the launcher's, or travel in the placement
};

// drun's options, in the order --help lists them.
const std::vector<Option>& options();

// Index in argv of the script: the first argument that is neither one of
// drun's options nor the value of one (argc when there is none).
int script_position(int argc, char** argv);

// Reads the command line into `req`. Returns the exit code when drun ends
// here: 0 after --help or --version, 2 (lua::kUsageExitCode) after one line
// saying what was wrong with an option, or that the script does not exist.
std::optional<int> parse(int argc, char** argv, Request& req);

// The options the launcher gives each rank's drun, in the table's spelling.
std::vector<std::string> rank_arguments(const Request& req);

}  // namespace drun::cli
