#include "launch/rank_death.hpp"

#include <regex>

namespace drun::launch {

std::optional<RankDeath> parse_rank_death(const std::string& line) {
  static const std::regex mpirun(
      R"(process rank (\d+) with PID \d+ on node (\S+) exited on signal (\d+(?: \([^)]*\))?))");
  // srun prints "Exited with exit code N" for ordinary exits: those are not deaths.
  static const std::regex srun(R"(srun: error: (\S+): tasks? (\d+)[-,\d]*: (.+?)\s*$)");
  // drun's stall inspector (distributed/stall_inspector.hpp) on a rank that fell silent.
  static const std::regex stall(R"(drun: stall: rank (\d+) \([^)]*\) on host (\S+))");
  static const std::regex srun_node(R"(srun: error: Node failure on (\S+))");
  static const std::regex mpirun_node(R"(Remote daemon\s*: \S+ on node (\S+))");
  std::smatch m;
  if (std::regex_search(line, m, srun_node)) return RankDeath{-1, m[1], "node failure", true};
  if (std::regex_search(line, m, mpirun_node))
    return RankDeath{-1, m[1], "lost contact with its daemon", true};
  if (std::regex_search(line, m, stall)) return RankDeath{std::stoi(m[1]), m[2], "stalled"};
  if (std::regex_search(line, m, mpirun))
    return RankDeath{std::stoi(m[1]), m[2], "signal " + m[3].str()};
  if (std::regex_search(line, m, srun) && m[3].str().rfind("Exited with exit code", 0) != 0)
    return RankDeath{std::stoi(m[2]), m[1], m[3]};
  return std::nullopt;
}

}  // namespace drun::launch
