#include "distributed/ps_worker.hpp"

#include <algorithm>
#include <limits>

namespace drun::distributed {

using namespace ps;

PsWorker::PsWorker(Communicator& world, Communicator& workers, const StrategySpec& spec,
                   const json& experiment_optimizer)
    : world_(world), workers_(workers), spec_(spec), experiment_optimizer_(experiment_optimizer) {}

void PsWorker::setup(std::span<Param* const> params) {
  roles_ = exchange_roles(world_, false);
  if (roles_.servers.empty())
    throw UsageError("strategy." + spec_.name +
                     " needs parameter servers, and the job has none (start it with drun, which "
                     "places them, or give --ps-per-node)");
  check_same_variables(workers_, params, spec_.name);
  // Non-trainable variables (batch-norm statistics) stay local; they start as the chief's.
  broadcast_from_chief(workers_, params);
  const int servers = static_cast<int>(roles_.servers.size());
  layout_.emplace(params, servers, spec_.variable_placement);
  send_.clear();
  recv_.clear();
  for (int64_t n : layout_->server_floats) {
    send_.push_back(Tensor::zeros(Shape{n}));
    recv_.push_back(Tensor::zeros(Shape{n}));
  }
  send_header_.assign(static_cast<size_t>(servers), {});
  recv_header_.assign(static_cast<size_t>(servers), {});
  version_.assign(static_cast<size_t>(servers), 0);
  if (spec_.local_update) {
    if (spec_.worker_momentum >= 0) {  // AEAMSGD: Nesterov momentum on the workers
      const float lr = optim::make_optimizer(experiment_optimizer_)->current_lr();
      local_ = optim::make_optimizer(
          {{"class_name", "SGD"},
           {"config",
            {{"learning_rate", lr}, {"momentum", spec_.worker_momentum}, {"nesterov", true}}}});
    } else if (!spec_.worker_optimizer.is_null()) {
      local_ = optim::make_optimizer(spec_.worker_optimizer);
    }
  }
  // The servers start from the chief's variables (or, resuming, from their
  // checkpoint shards); then every worker takes the servers' variables and
  // version. recv_ keeps what a worker last received (the anchor of the deltas
  // exchange).
  if (workers_.rank() == 0) {
    gather(params, From::values);
    exchange(kInit);
  }
  exchange(kFetch);
  scatter(params);
  for (auto& t : send_) t.zero();
  step_ = 0;
}

void PsWorker::gather(std::span<Param* const> params, From from) {
  for (const auto& s : layout_->slots) {
    const Param& p = *params[s.param];
    const float* src = from == From::values ? p.value.f32() : p.grad.f32();
    std::copy(src, src + s.numel, send_[static_cast<size_t>(s.server)].f32() + s.offset);
  }
}

void PsWorker::accumulate_gradients(std::span<Param* const> params) {
  for (const auto& s : layout_->slots) {
    const float* g = params[s.param]->grad.f32();
    float* acc = send_[static_cast<size_t>(s.server)].f32() + s.offset;
    for (int64_t i = 0; i < s.numel; ++i) acc[i] += g[i];
  }
}

void PsWorker::scatter(std::span<Param* const> params) {
  for (const auto& s : layout_->slots) {
    const float* src = recv_[static_cast<size_t>(s.server)].f32() + s.offset;
    std::copy(src, src + s.numel, params[s.param]->value.f32());
  }
}

namespace {
const char* exchange_name(Op op) {
  switch (op) {
    case kInit:
      return "init servers";
    case kPush:
      return "push";
    case kFetch:
      return "pull";
    case kPushFetch:
      return "push+pull";
    default:
      return "done";
  }
}
}  // namespace

void PsWorker::exchange(Op op) {
  const bool payload = op == kInit || op == kPush || op == kPushFetch;
  const bool reply = op == kFetch || op == kPushFetch;
  int64_t bytes = 0;  // both ways: the timeline's
  for (size_t s = 0; s < send_.size(); ++s)
    bytes += (payload ? send_[s].numel() * 4 : 0) + (reply ? recv_[s].numel() * 4 : 0);
  timeline::Span span(timeline_, timeline::Lane::main, timeline::kExchange, exchange_name(op),
                      "exchange", "bytes", bytes);
  for (size_t s = 0; s < roles_.servers.size(); ++s) {
    const int server = roles_.servers[s];
    if (reply) {
      world_.recv_start(recv_header_[s].data(), kHeaderLen, server, kReply);
      world_.recv_start(recv_[s].f32(), recv_[s].numel(), server, kReplyPayload);
    }
    send_header_[s] = {op, version_[s], op == kInit ? resume_step_ : 0, 0};
    world_.send_start(send_header_[s].data(), kHeaderLen, server, kRequest);
    if (payload) world_.send_start(send_[s].f32(), send_[s].numel(), server, kPayload);
  }
  world_.wait_all();
  if (!reply) return;
  for (size_t s = 0; s < roles_.servers.size(); ++s) {
    version_[s] = recv_header_[s][0];
    if (op != kPushFetch) continue;
    const auto staleness = static_cast<double>(recv_header_[s][1]);
    staleness_sum_ += staleness;
    staleness_max_ = std::max(staleness_max_, staleness);
    pushes_ += 1;
  }
}

void PsWorker::apply(optim::Optimizer& optimizer, std::span<Param* const> params) {
  optim::Optimizer& local = local_ ? *local_ : optimizer;
  // The worker's own update, where there is one.
  const auto local_apply = [&] {
    timeline::Span span(timeline_, timeline::Lane::main, timeline::kMain, "optimizer", "optimizer");
    local.apply(params);
  };
  if (spec_.exchange == Exchange::gradients && !spec_.local_update) {
    gather(params, From::gradients);
    exchange(kPushFetch);
    scatter(params);
    return;
  }
  if (spec_.exchange == Exchange::gradients) {  // Downpour
    accumulate_gradients(params);
    local_apply();
    ++step_;
    const bool push = step_ % spec_.push_every == 0, fetch = step_ % spec_.fetch_every == 0;
    if (push || fetch) exchange(push && fetch ? kPushFetch : push ? kPush : kFetch);
    if (push)
      for (auto& t : send_) t.zero();
    if (fetch) scatter(params);
    return;
  }
  local_apply();
  if (++step_ % spec_.push_every != 0) return;
  gather(params, From::values);
  if (spec_.exchange == Exchange::deltas) {
    // AGN: the accumulated change since the last fetch, normalised by lambda.
    const float inv = 1.f / static_cast<float>(spec_.push_every);
    for (size_t s = 0; s < send_.size(); ++s) {
      float* d = send_[s].f32();
      const float* anchor = recv_[s].f32();
      for (int64_t i = 0; i < send_[s].numel(); ++i) d[i] = (d[i] - anchor[i]) * inv;
    }
    exchange(kPushFetch);
    scatter(params);
    return;
  }
  // Elastic: recv_ holds the centre; w -= alpha (w - c).
  exchange(kPushFetch);
  const float a = elastic_alpha(spec_, workers_.size());
  for (const auto& s : layout_->slots) {
    const float* c = recv_[static_cast<size_t>(s.server)].f32() + s.offset;
    float* w = params[s.param]->value.f32();
    for (int64_t i = 0; i < s.numel; ++i) w[i] -= a * (w[i] - c[i]);
  }
}

json PsWorker::epoch_stats() {
  double totals[2] = {staleness_sum_, pushes_};
  double max = staleness_max_;
  workers_.allreduce_sum(totals, 2);
  workers_.allreduce_max(&max, 1);
  staleness_sum_ = staleness_max_ = pushes_ = 0;
  if (totals[1] == 0) return json::object();
  return {{"staleness_mean", totals[0] / totals[1]}, {"staleness_max", max}};
}

std::optional<int64_t> PsWorker::shared_global_step(std::span<Param* const> params) {
  exchange(kFetch);
  scatter(params);
  // Once the chief is done the step will not grow: nothing is left to wait for.
  for (const auto& h : recv_header_)
    if (h[2] != 0) return std::numeric_limits<int64_t>::max();
  return *std::min_element(version_.begin(), version_.end());
}

void PsWorker::checkpoint(const std::string& model_dir, int64_t step) {
  (void)model_dir;  // each server writes into its own model_dir, the same path on a shared disk
  for (size_t s = 0; s < roles_.servers.size(); ++s) {
    const int64_t header[kHeaderLen] = {kCheckpoint, step, 0, 0};
    world_.send(header, kHeaderLen, roles_.servers[s], kRequest);
  }
  for (size_t s = 0; s < roles_.servers.size(); ++s)
    world_.recv(recv_header_[s].data(), kHeaderLen, roles_.servers[s], kReply);
}

void PsWorker::finish(std::span<Param* const> params, const std::string& model_dir) {
  if (workers_.rank() != 0) {
    exchange(kDone);
    return;
  }
  // The chief's last word carries the model directory; every server answers
  // with its final variables once all workers are done.
  for (size_t s = 0; s < roles_.servers.size(); ++s) {
    const int server = roles_.servers[s];
    const int64_t header[kHeaderLen] = {kChiefDone, version_[s], 0, 0};
    world_.send(header, kHeaderLen, server, kRequest);
    world_.send(model_dir, server, kText);
  }
  for (size_t s = 0; s < roles_.servers.size(); ++s) {
    world_.recv(recv_header_[s].data(), kHeaderLen, roles_.servers[s], kReply);
    world_.recv(recv_[s].f32(), recv_[s].numel(), roles_.servers[s], kReplyPayload);
  }
  scatter(params);
}

}  // namespace drun::distributed
