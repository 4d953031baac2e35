#include "launch/cluster.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "base/options.hpp"

extern char** environ;

namespace drun::launch {
namespace {

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// A non-negative count; `what` names where it came from for the message.
int parse_count(const std::string& s, const std::string& what) {
  if (!all_digits(s) || s.size() > 9) throw UsageError(what + ": '" + s + "' is not a count");
  return std::stoi(s);
}

// More CPUs, slots, tasks or GPUs than any one node has (the largest have a
// few hundred hardware threads): a mistake, refused before a rank is placed
// for each (fuzz_cluster: "1(x999999999)" asked for 4 GB, and three hostfile
// lines of 999,999,999 slots overflowed their sum).
constexpr int kMaxPerNode = 65536;

[[noreturn]] void throw_too_many_on_a_node(const std::string& what, int64_t n) {
  throw UsageError(what + ": " + std::to_string(n) +
                   " on one node is more than any node has (at most " +
                   std::to_string(kMaxPerNode) + ")");
}

// A count of something on one node.
int parse_per_node(const std::string& s, const std::string& what) {
  const int n = parse_count(s, what);
  if (n > kMaxPerNode) throw_too_many_on_a_node(what, n);
  return n;
}

// Nodes in first-seen order; naming a host again adds to its slots, because
// LSF, PBS and hostfiles may list a host once per slot.
class NodeList {
 public:
  // Found by name through an index: a node list of 100,000 hosts took
  // minutes when each host searched the ones before it (fuzz_cluster).
  // `where` names the list for the message when a host's slots add up to too many.
  void add(const std::string& host, int slots, const std::string& where) {
    const auto [it, added] = index_.try_emplace(host, nodes_.size());
    if (added) nodes_.push_back(Node{host, 0, 0, 0});
    int& total = nodes_[it->second].slots;
    if (int64_t{total} + slots > kMaxPerNode)
      throw_too_many_on_a_node(where + " (slots of host '" + host + "')", int64_t{total} + slots);
    total += slots;
  }
  std::vector<Node> take() { return std::move(nodes_); }

 private:
  std::vector<Node> nodes_;
  std::unordered_map<std::string, size_t> index_;
};

// --- Slurm -----------------------------------------------------------------

// Ten times the nodes of the largest Slurm machines (about 10,000): a list
// that expands past it is a mistake, refused before it fills memory. This
// many hosts with 250-character names take 1.7 s and 0.8 GB to place and
// describe under AddressSanitizer (tools/fuzz/fuzz_cluster); 721,000 took
// over 10 s, and 139,000 drove a long campaign past its 2 GB.
constexpr size_t kMaxSlurmHosts = 100000;
// The longest host name DNS allows.
constexpr size_t kMaxHostName = 255;

[[noreturn]] void throw_bad_slurm_list(const std::string& list, const std::string& why) {
  throw UsageError("Slurm node list '" + list + "': " + why);
}

// "1-3,7,08-10" inside one pair of brackets; at most `room` values.
std::vector<std::string> expand_ranges(const std::string& body, const std::string& list,
                                       size_t room) {
  const auto fail = [&](const std::string& why) { throw_bad_slurm_list(list, why); };
  if (body.empty()) fail("empty brackets '[]'");
  std::vector<std::string> out;
  for (const std::string& part : split(body, ',')) {
    auto dash = part.find('-');
    std::string lo = part.substr(0, dash);
    std::string hi = dash == std::string::npos ? lo : part.substr(dash + 1);
    if (!all_digits(lo) || !all_digits(hi) || lo.size() > 9 || hi.size() > 9)
      fail("'" + part + "' in brackets is not a number or a range a-b");
    long a = std::stol(lo), b = std::stol(hi);
    if (a > b) fail("range '" + part + "' runs backwards");
    if (b - a >= 100000) fail("range '" + part + "' is too large");
    if (out.size() + static_cast<size_t>(b - a + 1) > room) fail("expands to too many hosts");
    // Slurm pads every number to the width of the range's lower bound.
    for (long v = a; v <= b; ++v) {
      std::string s = std::to_string(v);
      if (s.size() < lo.size()) s.insert(0, lo.size() - s.size(), '0');
      out.push_back(s);
    }
  }
  return out;
}

// One comma-free entry such as "rack[1-2]-n[01-02]": every combination, at
// most `room` of them. Sizes are checked before anything is built (a list
// of a few hundred bytes can name billions of hosts, or long ones).
std::vector<std::string> expand_entry(const std::string& entry, const std::string& list,
                                      size_t room) {
  const auto fail = [&](const std::string& why) { throw_bad_slurm_list(list, why); };
  const auto check_length = [&](size_t name) {
    if (name > kMaxHostName)
      fail("a host name in it is longer than " + std::to_string(kMaxHostName) + " characters");
  };
  std::vector<std::string> names = {""};
  size_t pos = 0;
  while (pos < entry.size()) {
    size_t open = entry.find('[', pos);
    std::string literal = entry.substr(pos, open - pos);
    check_length(names.front().size() + literal.size());
    for (std::string& n : names) n += literal;
    if (open == std::string::npos) break;
    size_t close = entry.find(']', open);  // brackets were checked to balance
    const std::vector<std::string> values =
        expand_ranges(entry.substr(open + 1, close - open - 1), list, room);
    if (names.size() * values.size() > room) fail("expands to too many hosts");
    size_t widest = 0;
    for (const std::string& v : values) widest = std::max(widest, v.size());
    check_length(names.front().size() + widest);
    std::vector<std::string> next;
    next.reserve(names.size() * values.size());
    for (const std::string& n : names)
      for (const std::string& v : values) next.push_back(n + v);
    names = std::move(next);
    pos = close + 1;
  }
  if (names.size() > room) fail("expands to too many hosts");
  return names;
}

// SLURM_JOB_CPUS_PER_NODE and SLURM_TASKS_PER_NODE: "4(x2),2" means 4, 4, 2,
// one count for each of the `nodes` hosts that `list_var` lists.
std::vector<int> expand_per_node(const std::string& var, const std::string& value, size_t nodes,
                                 const std::string& list_var) {
  const std::string what = var + "='" + value + "'";
  const auto not_one_a_node = [&](size_t n) {
    return UsageError(what + " gives " + std::to_string(n) + " nodes but " + list_var + " lists " +
                      std::to_string(nodes));
  };
  std::vector<int> out;
  for (const std::string& part : split(value, ',')) {
    auto paren = part.find('(');
    int count = parse_per_node(part.substr(0, paren), what);
    int times = 1;
    if (paren != std::string::npos) {
      if (part.size() < paren + 4 || part.compare(paren, 2, "(x") != 0 || part.back() != ')')
        throw UsageError(what + ": '" + part + "' is not N or N(xM)");
      times = parse_count(part.substr(paren + 2, part.size() - paren - 3), what);
    }
    // Checked before inserting: "(x999999999)" is 4 GB of counts.
    if (out.size() + times > nodes) throw not_one_a_node(out.size() + times);
    out.insert(out.end(), times, count);
  }
  if (out.size() != nodes) throw not_one_a_node(out.size());
  return out;
}

// Tasks the user asked for, per node: only when -n or --ntasks-per-node was
// given (Slurm sets SLURM_TASKS_PER_NODE always, one a node by default, and a
// bare `sbatch -N 4` asks for nodes, not for one rank on each).
std::vector<int> slurm_tasks(const Environment& env, size_t nodes, const std::string& list_var) {
  auto ntasks = env.nonempty("SLURM_NTASKS");
  auto per_node = env.nonempty("SLURM_NTASKS_PER_NODE");
  if (!ntasks && !per_node) return {};
  if (auto spread = env.nonempty("SLURM_TASKS_PER_NODE"))
    return expand_per_node("SLURM_TASKS_PER_NODE", *spread, nodes, list_var);
  if (per_node) return std::vector<int>(nodes, parse_per_node(*per_node, "SLURM_NTASKS_PER_NODE"));
  // SLURM_NTASKS alone (a recorded environment): Slurm's block distribution,
  // the first nodes taking the remainder.
  const int n = parse_count(*ntasks, "SLURM_NTASKS");
  const int count = static_cast<int>(nodes);
  std::vector<int> tasks;
  for (int i = 0; i < count; ++i) tasks.push_back(n / count + (i < n % count ? 1 : 0));
  return tasks;
}

std::optional<ClusterSpec> from_slurm(const Environment& env) {
  std::string var = "SLURM_JOB_NODELIST";
  auto list = env.nonempty(var);
  if (!list) list = env.nonempty(var = "SLURM_STEP_NODELIST");
  if (!list) return std::nullopt;
  ClusterSpec spec{"slurm", {}};
  NodeList nodes;
  for (const std::string& host : expand_slurm_nodelist(*list)) nodes.add(host, 0, var);
  spec.nodes = nodes.take();
  if (auto cpus = env.nonempty("SLURM_JOB_CPUS_PER_NODE")) {
    std::vector<int> per_node =
        expand_per_node("SLURM_JOB_CPUS_PER_NODE", *cpus, spec.nodes.size(), var);
    for (size_t i = 0; i < per_node.size(); ++i)
      spec.nodes[i].cores = spec.nodes[i].slots = per_node[i];
  }
  std::vector<int> tasks = slurm_tasks(env, spec.nodes.size(), var);
  for (size_t i = 0; i < tasks.size(); ++i) spec.nodes[i].tasks = tasks[i];
  return spec;
}

// --- LSF, PBS, hostfile ------------------------------------------------------

// On Summit-like systems the first host of the allocation is the batch
// (launch) node, which runs no ranks.
bool is_launch_host(const std::string& host) {
  return host.rfind("batch", 0) == 0 || host.rfind("login", 0) == 0;
}

std::optional<ClusterSpec> from_lsf(const Environment& env) {
  NodeList nodes;
  std::string var = "LSB_MCPU_HOSTS";
  if (auto mcpu = env.nonempty(var)) {
    std::vector<std::string> words = split_words(*mcpu);
    if (words.empty() || words.size() % 2 != 0)
      throw UsageError("LSB_MCPU_HOSTS='" + *mcpu + "' is not a list of 'host ncpu' pairs");
    for (size_t i = 0; i < words.size(); i += 2) {
      int n = parse_count(words[i + 1], "LSB_MCPU_HOSTS (cpus of host '" + words[i] + "')");
      if (!is_launch_host(words[i])) nodes.add(words[i], n, var);
    }
  } else if (auto hosts = env.nonempty(var = "LSB_HOSTS")) {
    for (const std::string& h : split_words(*hosts))
      if (!is_launch_host(h)) nodes.add(h, 1, var);
  } else {
    return std::nullopt;
  }
  ClusterSpec spec{"lsf", nodes.take()};
  for (Node& n : spec.nodes) n.cores = n.slots;
  if (spec.nodes.empty())
    throw UsageError(var + " lists only launch hosts (batch*, login*), no compute node");
  return spec;
}

std::optional<ClusterSpec> from_pbs(const Environment& env) {
  auto path = env.nonempty("PBS_NODEFILE");
  if (!path) return std::nullopt;
  std::ifstream in(*path);
  if (!in) throw UsageError("PBS_NODEFILE='" + *path + "': cannot open the file");
  NodeList nodes;
  const std::string where = "PBS_NODEFILE='" + *path + "'";
  for (std::string line; std::getline(in, line);)
    for (const std::string& host : split_words(line)) nodes.add(host, 1, where);
  ClusterSpec spec{"pbs", nodes.take()};
  if (spec.nodes.empty()) throw UsageError("PBS_NODEFILE='" + *path + "' lists no host");
  for (Node& n : spec.nodes) n.cores = n.slots;
  return spec;
}

// Open MPI hostfile: "host [slots=N] [max_slots=M]" per line, # comments.
// Without slots= the host's slots stay unknown (Open MPI then uses its cores).
ClusterSpec from_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("hostfile '" + path + "': cannot open the file");
  NodeList nodes;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::vector<std::string> words = split_words(line.substr(0, line.find('#')));
    if (words.empty()) continue;
    const std::string where = "hostfile '" + path + "' line " + std::to_string(line_no);
    int slots = 0;
    for (size_t i = 1; i < words.size(); ++i) {
      auto eq = words[i].find('=');
      std::string key = words[i].substr(0, eq);
      std::string value = eq == std::string::npos ? "" : words[i].substr(eq + 1);
      if (key == "slots") {
        slots = parse_count(value, where + " (slots)");
        if (slots == 0) throw UsageError(where + ": slots must be at least 1");
      } else if (key != "max_slots" && key != "max-slots") {
        throw UsageError(where + ": unknown '" + words[i] + "' (expected slots=N or max_slots=N)");
      }
    }
    nodes.add(words[0], slots, where);
  }
  ClusterSpec spec{"hostfile", nodes.take()};
  if (spec.nodes.empty()) throw UsageError("hostfile '" + path + "' lists no host");
  for (Node& n : spec.nodes) n.cores = n.slots;
  return spec;
}

int gpus_per_node(const Environment& env, const DiscoverOptions& opt) {
  if (opt.gpus_per_node >= 0) return opt.gpus_per_node;
  if (auto v = env.get("CUDA_VISIBLE_DEVICES")) return count_visible_devices(*v);
  if (auto v = env.nonempty("SLURM_GPUS_ON_NODE")) return parse_per_node(*v, "SLURM_GPUS_ON_NODE");
  return opt.local_gpus;
}

}  // namespace

Environment Environment::from_process() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    std::string entry = *e;
    auto eq = entry.find('=');
    if (eq != std::string::npos) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return Environment(std::move(vars));
}

std::optional<std::string> Environment::get(const std::string& name) const {
  auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Environment::nonempty(const std::string& name) const {
  auto v = get(name);
  if (v && v->empty()) return std::nullopt;
  return v;
}

std::vector<std::string> expand_slurm_nodelist(const std::string& list) {
  const auto fail = [&](const std::string& why) { throw_bad_slurm_list(list, why); };
  // Split at commas outside brackets, checking the brackets as we go.
  std::vector<std::string> entries(1);
  bool in_brackets = false;
  for (char c : list) {
    if (std::isspace(static_cast<unsigned char>(c))) fail("contains a space");
    if (c == '[') {
      if (in_brackets) fail("nested '['");
      in_brackets = true;
    } else if (c == ']') {
      if (!in_brackets) fail("']' without '['");
      in_brackets = false;
    } else if (c == ',' && !in_brackets) {
      entries.emplace_back();
      continue;
    }
    entries.back() += c;
  }
  if (in_brackets) fail("'[' without ']'");
  std::vector<std::string> hosts;
  for (const std::string& entry : entries) {
    if (entry.empty()) fail(list.empty() ? "is empty" : "has an empty entry");
    if (entry[0] == '[') fail("'" + entry + "' has no host name before '['");
    for (std::string& h : expand_entry(entry, list, kMaxSlurmHosts - hosts.size()))
      hosts.push_back(std::move(h));
  }
  return hosts;
}

int count_visible_devices(const std::string& value) {
  if (value.empty() || value == "NoDevFiles") return 0;
  int n = 0;
  for (const std::string& entry : split(value, ',')) {
    if (entry == "-1") break;
    ++n;
  }
  return n;
}

ClusterSpec discover_cluster(const Environment& env, const DiscoverOptions& opt) {
  std::optional<ClusterSpec> spec = from_slurm(env);
  if (!spec) spec = from_lsf(env);
  if (!spec) spec = from_pbs(env);
  if (!spec && !opt.hostfile.empty()) spec = from_hostfile(opt.hostfile);
  if (!spec) {
    int cores = opt.local_cores;
    spec = ClusterSpec{
        "local", {Node{opt.local_host.empty() ? "localhost" : opt.local_host, 0, cores, cores}}};
  }
  int gpus = gpus_per_node(env, opt);
  // LSF's and PBS's slots are the ranks asked for on CPU nodes only (see the header).
  const bool slots_are_tasks = (spec->source == "lsf" || spec->source == "pbs") && gpus == 0;
  for (Node& n : spec->nodes) {
    n.gpus = gpus;
    if (n.cores == 0) n.cores = opt.local_cores;
    if (slots_are_tasks) n.tasks = n.slots;
  }
  return *spec;
}

}  // namespace drun::launch
