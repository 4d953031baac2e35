// Timeline: what this process spent its time on, as intervals (forward and
// backward per layer, each gradient bucket's exchange, waits, optimizer,
// input, evaluation, checkpoints, parameter-server pushes, pulls and
// applies), written out as Chrome Trace Event Format JSON, which Perfetto
// and chrome://tracing open. `drun --timeline trace.json` turns it on
// (docs/timeline.md).
//
// Cheap enough to leave on: each thread that records owns a lane (a
// preallocated chunked buffer) that only it writes, so recording takes no
// lock and, once the first chunk is full, allocates once per 16,384 events;
// a time is steady_clock, in nanoseconds since the origin the job agreed on.
// Code that may record takes a `Timeline*` and does nothing when it is null
// (timelines off): one branch per event.
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace drun::timeline {

// The thread that records: each lane has exactly one writer at a time.
enum class Lane : uint8_t { main, input, eval };
inline constexpr int kLanes = 3;

// Tracks (Chrome's thread ids within a rank's process): several may share a
// lane (the main thread records its own work and the exchanges it starts).
// Bucket k of an exchange is track kExchange + k, so buckets in flight at
// once never overlap on one track.
enum Track : uint16_t { kMain = 1, kInput = 2, kEval = 3, kGpu = 4, kExchange = 16 };

struct Event {
  const char* name;  // a literal or interned: lives as long as the timeline
  const char* cat;   // a literal: forward, backward, exchange, wait, ...
  int64_t start_ns;
  int64_t dur_ns;
  const char* arg_name;  // nullptr: no argument
  int64_t arg;
  uint16_t track;
};

class Timeline {
 public:
  using Clock = std::chrono::steady_clock;
  // Each lane keeps at most `max_events` events; later ones are counted as dropped.
  explicit Timeline(int64_t max_events = int64_t{1} << 22);
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // Times are measured from here (every rank takes it right after a barrier).
  void set_origin(Clock::time_point origin) { origin_ = origin; }
  int64_t now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin_).count();
  }
  // A name built at run time (a layer's), kept for the timeline's life. Not
  // for the hot path: it locks and allocates.
  const char* intern(std::string name);
  // A finished interval [start, end) on `track`, recorded by `lane`'s thread.
  void record(Lane lane, uint16_t track, const char* name, const char* cat, int64_t start,
              int64_t end, const char* arg_name = nullptr, int64_t arg = 0);
  // A track's name in the trace (thread_name metadata); not for the hot path.
  void name_track(uint16_t track, std::string name);

  // Every event of this process as Chrome trace events of process `pid`
  // (comma-separated objects, no brackets), with process and thread names.
  // Call once the recording threads are done.
  std::string json_events(int pid, const std::string& role, const std::string& host) const;
  int64_t events() const;
  int64_t dropped() const;

 private:
  static constexpr int64_t kChunk = 16384;
  struct Buffer {
    std::vector<std::unique_ptr<Event[]>> chunks;
    int64_t size = 0;
    int64_t dropped = 0;
  };
  Clock::time_point origin_ = Clock::now();
  int64_t max_events_;
  Buffer lanes_[kLanes];
  mutable std::mutex names_mu_;  // intern and name_track only
  std::deque<std::string> names_;
  std::vector<std::pair<uint16_t, std::string>> track_names_;
};

// Records [construction, destruction) when the timeline is not null.
class Span {
 public:
  Span(Timeline* t, Lane lane, uint16_t track, const char* name, const char* cat,
       const char* arg_name = nullptr, int64_t arg = 0)
      : t_(t), lane_(lane), track_(track), name_(name), cat_(cat), arg_name_(arg_name), arg_(arg) {
    if (t_) start_ = t_->now();
  }
  ~Span() {
    if (t_) t_->record(lane_, track_, name_, cat_, start_, t_->now(), arg_name_, arg_);
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  Timeline* t_;
  Lane lane_;
  uint16_t track_;
  const char* name_;
  const char* cat_;
  const char* arg_name_;
  int64_t arg_;
  int64_t start_ = 0;
};

// The whole trace file: the ranks' json_events joined into one JSON object.
std::string trace_file(const std::vector<std::string>& ranks_events);

}  // namespace drun::timeline
