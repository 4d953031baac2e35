#include "launch/resize.hpp"

#include <algorithm>
#include <sstream>

namespace drun::launch {

ClusterSpec without_host(const ClusterSpec& cluster, const std::string& host) {
  ClusterSpec out = cluster;
  std::erase_if(out.nodes, [&](const Node& n) { return n.host == host; });
  return out;
}

std::string resizes_text(const std::vector<Resize>& resizes) {
  std::string out;
  for (const auto& r : resizes)
    out += (out.empty() ? "" : ",") + r.lost_node + ":" + std::to_string(r.step) + ":" +
           std::to_string(r.workers_before) + ":" + std::to_string(r.workers_after);
  return out;
}

namespace {

// A whole number >= 0, or -1.
int64_t count_of(const std::string& s) {
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoll(s);
}

}  // namespace

std::vector<Resize> parse_resizes(const std::string& text) {
  std::vector<Resize> out;
  std::stringstream entries(text);
  for (std::string entry; std::getline(entries, entry, ',');) {
    std::vector<std::string> f;
    std::stringstream fields(entry);
    for (std::string x; std::getline(fields, x, ':');) f.push_back(x);
    const bool ok = f.size() == 4 && !f[0].empty() && count_of(f[1]) >= 0 && count_of(f[2]) >= 1 &&
                    count_of(f[3]) >= 1 && f[2].size() < 10 && f[3].size() < 10;
    if (!ok)
      throw UsageError("DRUN_RESIZED: expected NODE:STEP:WORKERS_BEFORE:WORKERS_AFTER, got '" +
                       entry + "'");
    out.push_back(
        {f[0], count_of(f[1]), static_cast<int>(count_of(f[2])), static_cast<int>(count_of(f[3]))});
  }
  return out;
}

json resizes_json(const std::vector<Resize>& resizes) {
  json out = json::array();
  for (const auto& r : resizes)
    out.push_back({{"lost_node", r.lost_node},
                   {"step", r.step},
                   {"workers_before", r.workers_before},
                   {"workers_after", r.workers_after}});
  return out;
}

}  // namespace drun::launch
