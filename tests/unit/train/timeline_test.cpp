// The timeline's recording and its Chrome trace JSON (runtime/base/timeline):
// events come out with the Trace Event Format's fields in microseconds,
// names from scripts are escaped, a full lane drops and counts, a null
// timeline records nothing. tests/dist/timeline_test.py checks whole traces.
#include "base/timeline.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/options.hpp"

namespace drun::timeline {
namespace {

json parse(const Timeline& t) {
  return json::parse(trace_file({t.json_events(3, "worker 1", "node-a")}));
}

TEST(Timeline, EventsBecomeCompleteEventsInMicroseconds) {
  Timeline t;
  t.record(Lane::main, kMain, "forward dense", "forward", 2000, 5500);
  t.record(Lane::main, kExchange + 1, "allreduce bucket 1", "exchange", 3000, 9000, "bytes", 4096);
  const json trace = parse(t);
  std::vector<json> complete;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") complete.push_back(e);
  ASSERT_EQ(complete.size(), 2u);
  EXPECT_EQ(complete[0]["name"], "forward dense");
  EXPECT_EQ(complete[0]["cat"], "forward");
  EXPECT_EQ(complete[0]["pid"], 3);
  EXPECT_EQ(complete[0]["tid"], kMain);
  EXPECT_DOUBLE_EQ(complete[0]["ts"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(complete[0]["dur"].get<double>(), 3.5);
  EXPECT_EQ(complete[1]["tid"], kExchange + 1);
  EXPECT_EQ(complete[1]["args"]["bytes"], 4096);
}

TEST(Timeline, NamesProcessesAndEveryTrackUsed) {
  Timeline t;
  t.name_track(kExchange, "exchange: parameter servers");
  t.record(Lane::input, kInput, "make batch", "input", 0, 10);
  t.record(Lane::main, kExchange, "push+pull", "exchange", 0, 10);
  std::map<std::string, std::string> names;  // "process" or the tid, to its name
  const json trace = parse(t);               // alive while the loop reads it
  for (const auto& e : trace["traceEvents"]) {
    if (e["name"] == "process_name") names["process"] = e["args"]["name"];
    if (e["name"] == "thread_name") names[std::to_string(e["tid"].get<int>())] = e["args"]["name"];
  }
  EXPECT_EQ(names["process"], "rank 3: worker 1 (node-a)");
  EXPECT_EQ(names[std::to_string(kMain)], "main");
  EXPECT_EQ(names[std::to_string(kInput)], "input (prefetch thread)");
  EXPECT_EQ(names[std::to_string(kExchange)], "exchange: parameter servers");
}

TEST(Timeline, EscapesNamesFromScripts) {
  Timeline t;
  t.record(Lane::main, kMain, t.intern("forward \"odd\\name\"\n"), "forward", 0, 1);
  bool found = false;
  const json trace = parse(t);  // alive while the loop reads it
  for (const auto& e : trace["traceEvents"])
    found = found || e["name"] == "forward \"odd\\name\"\n";
  EXPECT_TRUE(found);
}

TEST(Timeline, AFullLaneDropsAndCounts) {
  Timeline t(3);
  for (int i = 0; i < 5; ++i) t.record(Lane::main, kMain, "x", "step", i, i + 1);
  t.record(Lane::eval, kEval, "evaluate", "evaluate", 0, 1);  // another lane has room
  EXPECT_EQ(t.events(), 4);
  EXPECT_EQ(t.dropped(), 2);
}

TEST(Timeline, GrowsPastItsFirstChunk) {
  Timeline t;
  const int n = 40000;  // more than two chunks
  for (int i = 0; i < n; ++i) t.record(Lane::main, kMain, "x", "step", i, i + 1);
  EXPECT_EQ(t.events(), n);
  int complete = 0;
  const json trace = parse(t);  // alive while the loop reads it
  for (const auto& e : trace["traceEvents"]) complete += e["ph"] == "X";
  EXPECT_EQ(complete, n);
}

TEST(Timeline, SpansRecordOnlyOnATimeline) {
  Timeline t;
  { Span nothing(nullptr, Lane::main, kMain, "off", "step"); }
  { Span one(&t, Lane::main, kMain, "on", "step", "step", 7); }
  EXPECT_EQ(t.events(), 1);
  const json trace = parse(t);  // alive while the loop reads it
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") {
      EXPECT_EQ(e["name"], "on");
      EXPECT_EQ(e["args"]["step"], 7);
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
}

}  // namespace
}  // namespace drun::timeline
