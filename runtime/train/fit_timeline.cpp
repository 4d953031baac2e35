#include "train/fit_timeline.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "io/atomic_file.hpp"

namespace drun::train {

namespace {

constexpr int kTimelineTag = 7101;  // apart from the parameter servers' tags (7001...)

std::string this_host(const Context& ctx) {
  if (ctx.comm) return ctx.comm->host();
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// "chief", "worker 1", "ps 0": what placement made this rank.
std::string role_name(const Context& ctx) {
  if (ctx.role == "chief") return "chief";
  return ctx.role + " " + std::to_string(ctx.task_index);
}

}  // namespace

FitTimeline::FitTimeline(const Context& ctx, std::string path) : ctx_(ctx), path_(std::move(path)) {
  if (ctx_.comm) ctx_.comm->barrier();
  timeline_.set_origin(timeline::Timeline::Clock::now());
}

void FitTimeline::write() {
  const int rank = ctx_.comm ? ctx_.comm->rank() : 0;
  const int size = ctx_.comm ? ctx_.comm->size() : 1;
  std::string mine = timeline_.json_events(rank, role_name(ctx_), this_host(ctx_));
  if (timeline_.dropped() > 0)
    std::fprintf(stderr, "drun: warning: timeline of rank %d full: %lld events not recorded\n",
                 rank, static_cast<long long>(timeline_.dropped()));
  if (rank != 0) {
    ctx_.comm->send(mine, 0, kTimelineTag);
    return;
  }
  std::vector<std::string> all;
  all.push_back(std::move(mine));
  for (int r = 1; r < size; ++r) all.push_back(ctx_.comm->recv_text(r, kTimelineTag));
  const auto parent = std::filesystem::path(path_).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  io::write_text_atomically(path_, timeline::trace_file(all));
}

}  // namespace drun::train
