#include "distributed/ps_server.hpp"

#include <algorithm>
#include <filesystem>

#include "io/h5_tensors.hpp"

namespace drun::distributed {

using namespace ps;

ParameterServer::ParameterServer(Communicator& world, const StrategySpec& spec,
                                 std::span<Param* const> params, const json& experiment_optimizer,
                                 std::string model_dir)
    : world_(world),
      spec_(spec),
      roles_(exchange_roles(world, true)),
      checkpoint_dir_(std::move(model_dir)) {
  index_ = roles_.server_index(world.rank());
  active_ = static_cast<int>(roles_.workers.size());
  const Layout layout(params, static_cast<int>(roles_.servers.size()), spec.variable_placement);
  const int64_t n = layout.server_floats[static_cast<size_t>(index_)];
  values_ = Tensor::zeros(Shape{n});
  gradient_ = Tensor::zeros(Shape{n});
  incoming_ = Tensor::zeros(Shape{n});
  round_sum_ = Tensor::zeros(Shape{n});
  for (const auto& s : layout.slots) {
    if (s.server != index_) continue;
    const Param& p = *params[s.param];
    const Shape shape = p.value.shape();
    shard_.push_back({p.name, values_.rows(s.offset, s.offset + s.numel).reshaped(shape),
                      gradient_.rows(s.offset, s.offset + s.numel).reshaped(shape), true});
  }
  for (auto& p : shard_) shard_ptrs_.push_back(&p);
  if (spec.exchange == Exchange::gradients) {
    // The workers accumulate: a push is a cycle's mean gradient, applied at once.
    optimizer_ = optim::make_optimizer(optim::without_accumulation(
        spec.server_optimizer.is_null() ? experiment_optimizer : spec.server_optimizer));
    base_lr_ = optimizer_->current_lr();
    if (spec.scale_lr) lr_scale_ = static_cast<float>(roles_.workers.size());
    optimizer_->set_lr_scale(lr_scale_);
  }
  const size_t workers = roles_.workers.size();
  if (!spec.learning_rates.empty() && spec.learning_rates.size() != workers)
    throw UsageError("strategy." + spec.name + ": learning_rates has " +
                     std::to_string(spec.learning_rates.size()) + " entries for " +
                     std::to_string(workers) + " workers");
}

int ParameterServer::needed() const {
  const int workers = static_cast<int>(roles_.workers.size());
  const int n = spec_.replicas_to_aggregate > 0 ? spec_.replicas_to_aggregate
                                                : workers - spec_.backup_workers;
  return std::max(1, std::min(n, active_));
}

float ParameterServer::alpha() const {
  return elastic_alpha(spec_, static_cast<int>(roles_.workers.size()));
}

json ParameterServer::serve() {
  // The chief's initial variables come first, whatever else is queued.
  int64_t header[kHeaderLen];
  world_.recv(header, kHeaderLen, roles_.workers[0], kRequest);
  if (header[0] != kInit) throw std::logic_error("parameter server: expected the chief's init");
  world_.recv(values_.f32(), values_.numel(), roles_.workers[0], kPayload);
  if (header[2] >= 0) load_shard(header[2]);
  while (active_ > 0) {
    int source = -1;
    {
      timeline::Span wait(timeline_, timeline::Lane::main, timeline::kMain, "wait for requests",
                          "wait");
      source = world_.recv_any(header, kHeaderLen, kRequest);
    }
    handle(source, header);
  }
  finish();
  const double mean = contributions_ ? static_cast<double>(staleness_sum_) / contributions_ : 0;
  return {{"role", "ps"},
          {"server", index_},
          {"version", version_},
          {"pushes", contributions_},
          {"dropped", dropped_},
          {"staleness_mean", mean},
          {"staleness_max", staleness_max_}};
}

void ParameterServer::receive_payload(int source) {
  timeline::Span span(timeline_, timeline::Lane::main, timeline::kExchange, "receive push",
                      "exchange", "bytes", incoming_.numel() * 4);
  world_.recv(incoming_.f32(), incoming_.numel(), source, kPayload);
}

void ParameterServer::handle(int source, const int64_t* header) {
  const int64_t op = header[0], seen = header[1];
  switch (op) {
    case kFetch:
      reply(source, values_, 0);
      return;
    case kPush:
    case kPushFetch: {
      receive_payload(source);
      const int64_t staleness = version_ - seen;
      if (spec_.sync) {
        contribute(source, seen);
        return;
      }
      staleness_sum_ += staleness;
      staleness_max_ = std::max(staleness_max_, staleness);
      ++contributions_;
      float* w = values_.f32();
      const float* x = incoming_.f32();
      const int64_t n = values_.numel();
      {
        timeline::Span apply(timeline_, timeline::Lane::main, timeline::kMain, "server apply",
                             "server apply");
        if (spec_.exchange == Exchange::gradients) {
          apply_gradient(incoming_, staleness);
        } else if (spec_.exchange == Exchange::deltas) {
          for (int64_t i = 0; i < n; ++i) w[i] += x[i];
        } else {  // elastic: the worker moves by alpha (x - centre), the centre by as much
          gradient_.copy_from(values_);  // the centre the worker is pulled towards
          const float a = alpha();
          for (int64_t i = 0; i < n; ++i) w[i] += a * (x[i] - w[i]);
        }
      }
      ++version_;
      if (op == kPushFetch)
        reply(source, spec_.exchange == Exchange::elastic ? gradient_ : values_, staleness);
      return;
    }
    case kCheckpoint: {
      write_shard(seen);
      const int64_t ack[kHeaderLen] = {version_, 0, 0, 0};
      world_.send(ack, kHeaderLen, source, kReply);
      return;
    }
    case kDone:
      --active_;
      complete_round_if_full();
      return;
    case kChiefDone:
      chief_ = source;
      model_dir_ = world_.recv_text(source, kText);
      --active_;
      complete_round_if_full();
      return;
    default:
      throw std::logic_error("parameter server: unknown request " + std::to_string(op));
  }
}

void ParameterServer::apply_gradient(const Tensor& gradient, int64_t staleness) {
  gradient_.copy_from(gradient);
  float scale = lr_scale_;
  if (spec_.staleness_lr) scale /= static_cast<float>(std::max<int64_t>(1, staleness));
  optimizer_->set_lr_scale(scale);
  optimizer_->apply(shard_ptrs_);
}

void ParameterServer::contribute(int source, int64_t version_seen) {
  if (spec_.exchange == Exchange::gradients && version_seen < version_) {
    // A backup worker's gradient for a round already applied: dropped, and
    // the worker goes on from the current variables (SyncReplicasOptimizer).
    ++dropped_;
    reply(source, values_, version_ - version_seen);
    return;
  }
  float weight = 1.f;
  if (!spec_.learning_rates.empty()) {
    const auto w = std::find(roles_.workers.begin(), roles_.workers.end(), source);
    weight =
        static_cast<float>(spec_.learning_rates[static_cast<size_t>(w - roles_.workers.begin())]) /
        base_lr_;
  }
  float* sum = round_sum_.f32();
  const float* x = incoming_.f32();
  for (int64_t i = 0; i < round_sum_.numel(); ++i) sum[i] += weight * x[i];
  round_.push_back(source);
  ++contributions_;
  complete_round_if_full();
}

void ParameterServer::complete_round_if_full() {
  if (round_.empty() || static_cast<int>(round_.size()) < needed()) return;
  {
    timeline::Span apply(timeline_, timeline::Lane::main, timeline::kMain, "server apply (round)",
                         "server apply", "contributions", static_cast<int64_t>(round_.size()));
    const float count = static_cast<float>(round_.size());
    float* w = values_.f32();
    float* sum = round_sum_.f32();
    const int64_t n = values_.numel();
    if (spec_.exchange == Exchange::gradients) {
      for (int64_t i = 0; i < n; ++i) sum[i] /= count;
      apply_gradient(round_sum_, 0);
    } else if (spec_.exchange == Exchange::deltas) {
      for (int64_t i = 0; i < n; ++i) w[i] += sum[i];
    } else {  // elastic: every worker is pulled towards the centre before the round moves it
      gradient_.copy_from(values_);
      const float a = alpha();
      for (int64_t i = 0; i < n; ++i) w[i] += a * (sum[i] - count * w[i]);
    }
  }
  ++version_;
  for (int dest : round_) reply(dest, spec_.exchange == Exchange::elastic ? gradient_ : values_, 0);
  round_.clear();
  round_sum_.zero();
}

void ParameterServer::reply(int dest, const Tensor& values, int64_t staleness) {
  timeline::Span span(timeline_, timeline::Lane::main, timeline::kExchange, "reply (pull)",
                      "exchange", "bytes", values.numel() * 4);
  const int64_t header[kHeaderLen] = {version_, staleness, chief_ >= 0 ? 1 : 0, 0};
  world_.send(header, kHeaderLen, dest, kReply);
  world_.send(values.f32(), values.numel(), dest, kReplyPayload);
}

void ParameterServer::write_shard(int64_t step) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& p : shard_) tensors.emplace_back("model/" + p.name, p.value);
  json a = {{"version", version_}, {"optimizer_built", false}};
  if (optimizer_) {
    for (const auto& [name, t] : optimizer_->state()) tensors.emplace_back("optimizer/" + name, *t);
    a["optimizer_built"] = optimizer_->built();
    a["optimizer_iterations"] = optimizer_->iterations();
  }
  std::filesystem::create_directories(checkpoint_dir_);
  io::write_tensors(shard_path(checkpoint_dir_, step, index_), tensors, a);
}

void ParameterServer::load_shard(int64_t step) {
  const std::string path = shard_path(checkpoint_dir_, step, index_);
  const auto file = io::read_tensor_file(path);
  // A job that went on with fewer servers (drun --min-workers) placed the
  // variables anew: one this server's file lacks is in another server's.
  std::vector<io::TensorFile> others;
  const auto find_elsewhere = [&](const std::string& name) -> const Tensor* {
    if (others.empty())
      for (int i = 0;; ++i) {
        if (i == index_) continue;
        const std::string other = shard_path(checkpoint_dir_, step, i);
        if (!std::filesystem::exists(other)) break;
        others.push_back(io::read_tensor_file(other));
      }
    for (const auto& f : others)
      if (const auto found = f.tensors.find(name); found != f.tensors.end()) return &found->second;
    return nullptr;
  };
  const auto take = [&](const std::string& name, Tensor& into) {
    const auto found = file.tensors.find(name);
    const Tensor* from = found != file.tensors.end() ? &found->second : find_elsewhere(name);
    if (!from || from->numel() != into.numel())
      throw UsageError("parameter server " + std::to_string(index_) + ": " + path + " lacks '" +
                       name + "' or holds another shape");
    std::copy(from->f32(), from->f32() + into.numel(), into.f32());
  };
  for (auto& p : shard_) take("model/" + p.name, p.value);
  version_ = file.attributes.value("version", int64_t{0});
  if (optimizer_ && file.attributes.value("optimizer_built", false)) {
    optimizer_->build(shard_ptrs_);
    for (auto& [name, t] : optimizer_->state()) take("optimizer/" + name, *t);
    optimizer_->set_iterations(file.attributes.value("optimizer_iterations", int64_t{0}));
  }
}

void ParameterServer::finish() {
  if (!model_dir_.empty()) {
    std::filesystem::create_directories(model_dir_);
    std::vector<std::pair<std::string, Tensor>> tensors;
    for (const auto& p : shard_) tensors.emplace_back(p.name, p.value);
    io::write_tensors(model_dir_ + "/ps-" + std::to_string(index_) + ".h5", tensors);
  }
  if (chief_ >= 0) reply(chief_, values_, 0);
}

}  // namespace drun::distributed
