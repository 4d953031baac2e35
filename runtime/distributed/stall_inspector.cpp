#include "distributed/stall_inspector.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "distributed/activity.hpp"

namespace drun::distributed {

namespace fs = std::filesystem;

json to_json(const Heartbeat& h) {
  return {{"rank", h.rank},
          {"host", h.host},
          {"role", h.role},
          {"task", h.task_index},
          {"step", h.step},
          {"waiting", h.waiting},
          {"waiting_since", h.waiting_since},
          {"time", h.time}};
}

Heartbeat heartbeat_from_json(const json& j) {
  return {j.at("rank").get<int>(),
          j.at("host").get<std::string>(),
          j.at("role").get<std::string>(),
          j.at("task").get<int>(),
          j.at("step").get<int64_t>(),
          j.at("waiting").get<std::string>(),
          j.at("waiting_since").get<double>(),
          j.at("time").get<double>()};
}

std::vector<Heartbeat> stalled_ranks(const Heartbeat& me, const std::vector<Heartbeat>& others,
                                     double now, double timeout) {
  if (me.waiting.empty() || now - me.waiting_since <= timeout) return {};
  std::vector<Heartbeat> out;
  for (const Heartbeat& h : others)
    if (h.rank != me.rank && now - h.time > timeout) out.push_back(h);
  std::sort(out.begin(), out.end(),
            [](const Heartbeat& a, const Heartbeat& b) { return a.time < b.time; });
  return out;
}

std::string stall_message(const Heartbeat& stalled, const Heartbeat& me, double now,
                          double timeout) {
  const std::string doing = stalled.waiting.empty() ? "computing" : "waiting in " + stalled.waiting;
  return fmt::format(
      "drun: stall: rank {} ({} {}) on host {} has not been heard from for {:.0f} s (last seen "
      "at step {}, {}); rank {} has waited in {} for {:.0f} s. Ending the job (--stall-timeout "
      "{:g}).",
      stalled.rank, stalled.role, stalled.task_index, stalled.host, now - stalled.time,
      stalled.step, doing, me.rank, me.waiting, now - me.waiting_since, timeout);
}

StallInspector::StallInspector(std::string dir, double timeout, Heartbeat me)
    : dir_(std::move(dir)), timeout_(timeout), me_(std::move(me)) {
  fs::create_directories(dir_);
  path_ = (fs::path(dir_) / fmt::format("rank-{}.json", me_.rank)).string();
  thread_ = std::thread([this] { run(); });
}

StallInspector::~StallInspector() {
  stop_ = true;
  thread_.join();
  std::error_code ignored;
  fs::remove(path_, ignored);
  fs::remove(dir_, ignored);                          // the last rank out removes the directory
  fs::remove(fs::path(dir_).parent_path(), ignored);  // and .drun-stall, when no other job uses it
}

Heartbeat StallInspector::current() const {
  Heartbeat h = me_;
  h.step = activity::step();
  const char* exchange = activity::waiting_in();
  h.waiting = exchange ? exchange : "";
  h.waiting_since = exchange ? activity::waiting_since() : 0;
  h.time = activity::now();
  return h;
}

std::vector<Heartbeat> StallInspector::read_others() const {
  std::vector<Heartbeat> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("rank-", 0) != 0 || entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    try {
      out.push_back(heartbeat_from_json(json::parse(in)));
    } catch (const std::exception&) {
      // A file being replaced or cut short: read it next time.
    }
  }
  return out;
}

void StallInspector::run() {
  const std::string tmp = path_ + ".tmp";
  while (!stop_) {
    const Heartbeat me = current();
    {  // written whole, then renamed: a reader never sees half a heartbeat
      std::ofstream out(tmp);
      out << to_json(me).dump() << "\n";
    }
    std::rename(tmp.c_str(), path_.c_str());
    const auto stalled = stalled_ranks(me, read_others(), activity::now(), timeout_);
    if (!stalled.empty()) {
      std::cerr << stall_message(stalled.front(), me, activity::now(), timeout_) << std::endl;
      // The job ends: no heartbeat of it is needed any more (the silent
      // rank's included, which will not remove its own).
      std::error_code ignored;
      fs::remove_all(dir_, ignored);
      // The thread that trains is blocked in MPI: end the process from here.
      std::_Exit(1);
    }
    for (int i = 0; i < 10 && !stop_; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace drun::distributed
