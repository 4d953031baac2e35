#include "base/timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <set>

namespace drun::timeline {

namespace {

// A JSON string literal (names come from scripts: layer names may hold anything).
void append_quoted(std::string& out, const std::string& s) {
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned char>(c));
        else
          out += c;
    }
  }
  out += '"';
}

void append_metadata(std::string& out, const char* what, int pid, int tid, const std::string& key,
                     const std::string& value) {
  if (!out.empty()) out += ",\n";
  fmt::format_to(std::back_inserter(out), R"({{"name":"{}","ph":"M","pid":{},"tid":{},"args":{{")",
                 what, pid, tid);
  out += key;
  out += "\":";
  append_quoted(out, value);
  out += "}}";
}

std::string default_track_name(uint16_t track) {
  switch (track) {
    case kMain:
      return "main";
    case kInput:
      return "input (prefetch thread)";
    case kEval:
      return "evaluation (thread)";
    case kGpu:
      return "GPU stream";
    default:
      return track >= kExchange ? fmt::format("exchange {}", track - kExchange)
                                : fmt::format("track {}", track);
  }
}

}  // namespace

Timeline::Timeline(int64_t max_events) : max_events_(max_events) {
  // The first chunk of every lane up front: a short run allocates nothing while it records.
  for (auto& lane : lanes_) lane.chunks.push_back(std::make_unique<Event[]>(kChunk));
}

const char* Timeline::intern(std::string name) {
  std::lock_guard lock(names_mu_);
  return names_.emplace_back(std::move(name)).c_str();
}

void Timeline::name_track(uint16_t track, std::string name) {
  std::lock_guard lock(names_mu_);
  for (auto& [t, n] : track_names_)
    if (t == track) {
      n = std::move(name);
      return;
    }
  track_names_.emplace_back(track, std::move(name));
}

void Timeline::record(Lane lane, uint16_t track, const char* name, const char* cat, int64_t start,
                      int64_t end, const char* arg_name, int64_t arg) {
  Buffer& b = lanes_[static_cast<int>(lane)];
  if (b.size >= max_events_) {
    ++b.dropped;
    return;
  }
  const auto chunk = static_cast<size_t>(b.size / kChunk);
  if (chunk == b.chunks.size()) b.chunks.push_back(std::make_unique<Event[]>(kChunk));
  b.chunks[chunk][b.size % kChunk] = {name,     cat, start, std::max<int64_t>(0, end - start),
                                      arg_name, arg, track};
  ++b.size;
}

int64_t Timeline::events() const {
  int64_t n = 0;
  for (const auto& b : lanes_) n += b.size;
  return n;
}

int64_t Timeline::dropped() const {
  int64_t n = 0;
  for (const auto& b : lanes_) n += b.dropped;
  return n;
}

std::string Timeline::json_events(int pid, const std::string& role, const std::string& host) const {
  std::string out;
  append_metadata(out, "process_name", pid, 0, "name",
                  fmt::format("rank {}: {} ({})", pid, role, host));
  append_metadata(out, "process_labels", pid, 0, "labels", role + "," + host);
  fmt::format_to(std::back_inserter(out),
                 ",\n{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":0,"
                 "\"args\":{{\"sort_index\":{}}}}}",
                 pid, pid);
  std::set<uint16_t> tracks;
  for (const auto& b : lanes_)
    for (int64_t i = 0; i < b.size; ++i) tracks.insert(b.chunks[i / kChunk][i % kChunk].track);
  tracks.insert(kMain);
  {
    std::lock_guard lock(names_mu_);
    for (uint16_t t : tracks) {
      std::string name = default_track_name(t);
      for (const auto& [known, n] : track_names_)
        if (known == t) name = n;
      append_metadata(out, "thread_name", pid, t, "name", name);
      fmt::format_to(std::back_inserter(out),
                     ",\n{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":{},"
                     "\"args\":{{\"sort_index\":{}}}}}",
                     pid, t, t);
    }
  }
  // Complete events ("X"): ts and dur in microseconds, to the nanosecond.
  for (const auto& b : lanes_)
    for (int64_t i = 0; i < b.size; ++i) {
      const Event& e = b.chunks[i / kChunk][i % kChunk];
      out += ",\n{\"name\":";
      append_quoted(out, e.name);
      fmt::format_to(std::back_inserter(out),
                     R"(,"cat":"{}","ph":"X","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f})", e.cat,
                     pid, e.track, static_cast<double>(e.start_ns) / 1e3,
                     static_cast<double>(e.dur_ns) / 1e3);
      if (e.arg_name)
        fmt::format_to(std::back_inserter(out), R"(,"args":{{"{}":{}}})", e.arg_name, e.arg);
      out += '}';
    }
  return out;
}

std::string trace_file(const std::vector<std::string>& ranks_events) {
  std::string out = "{\"traceEvents\":[\n";
  bool first = true;
  for (const auto& r : ranks_events) {
    if (r.empty()) continue;
    if (!first) out += ",\n";
    out += r;
    first = false;
  }
  out += "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"producer\":\"drun --timeline\"}}\n";
  return out;
}

}  // namespace drun::timeline
