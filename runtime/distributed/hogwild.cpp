#include "distributed/hogwild.hpp"

#include <filesystem>

#include "distributed/strategy_spec.hpp"
#include "io/h5_tensors.hpp"

namespace drun::distributed {

using namespace ps;

namespace {

// Ranks of the job on one node; the first server owns the shared copy.
std::unique_ptr<Communicator> node_of(Communicator& world, const Roles& roles) {
  auto node = world.split_node();
  if (node->size() != world.size())
    throw UsageError(
        "strategy.Hogwild shares one copy of the variables in one node's memory; "
        "this job spans several nodes (run it on one, or use AEASGD or "
        "ParameterServer across nodes)");
  if (roles.servers.empty())
    throw UsageError(
        "strategy.Hogwild needs the node's parameter server to own the shared "
        "copy; start the job with drun, which places it");
  return node;
}

int64_t trainable_floats(std::span<Param* const> params) {
  int64_t n = 0;
  for (const Param* p : params)
    if (p->trainable) n += p->value.numel();
  return n;
}

}  // namespace

Hogwild::Hogwild(Communicator& world, Communicator& workers, const StrategySpec& spec)
    : world_(world), workers_(workers), spec_(spec) {}

Hogwild::~Hogwild() = default;

void Hogwild::setup(std::span<Param* const> params) {
  roles_ = exchange_roles(world_, false);
  node_ = node_of(world_, roles_);
  check_same_variables(workers_, params, "Hogwild");
  broadcast_from_chief(workers_, params);
  window_.emplace(*node_, roles_.servers[0], trainable_floats(params));
  float* shared = window_->data();
  if (workers_.rank() == 0) {
    int64_t offset = 0;
    for (const Param* p : params) {
      if (!p->trainable) continue;
      std::copy(p->value.f32(), p->value.f32() + p->value.numel(), shared + offset);
      offset += p->value.numel();
    }
  }
  node_->barrier();  // the chief's values are in place
  int64_t offset = 0;
  for (Param* p : params) {
    if (!p->trainable) continue;
    p->value = Tensor::borrowed(shared + offset, p->value.shape());
    offset += p->value.numel();
  }
}

void Hogwild::finish(std::span<Param* const> params, const std::string& model_dir) {
  const int server = roles_.servers[0];
  const int64_t header[kHeaderLen] = {workers_.rank() == 0 ? kChiefDone : kDone, 0, 0, 0};
  world_.send(header, kHeaderLen, server, kRequest);
  if (workers_.rank() == 0) {
    world_.send(model_dir, server, kText);
    int64_t reply[kHeaderLen];
    world_.recv(reply, kHeaderLen, server, kReply);  // every worker is done
  }
  // The variables leave the shared window before it goes.
  for (Param* p : params)
    if (p->trainable) p->value = p->value.clone();
  window_->release();
}

json serve_hogwild(Communicator& world, const StrategySpec& spec, std::span<Param* const> params) {
  (void)spec;
  const Roles roles = exchange_roles(world, true);
  auto node = node_of(world, roles);
  SharedWindow window(*node, roles.servers[0], trainable_floats(params));
  node->barrier();
  json stats = {{"role", "ps"}, {"server", roles.server_index(world.rank())}};
  if (world.rank() == roles.servers[0]) {
    int active = static_cast<int>(roles.workers.size()), chief = -1;
    std::string model_dir;
    int64_t header[kHeaderLen];
    while (active > 0) {
      const int source = world.recv_any(header, kHeaderLen, kRequest);
      if (header[0] == kChiefDone) {
        chief = source;
        model_dir = world.recv_text(source, kText);
      }
      --active;
    }
    if (!model_dir.empty()) {
      std::filesystem::create_directories(model_dir);
      std::vector<std::pair<std::string, Tensor>> tensors;
      int64_t offset = 0;
      for (const Param* p : params) {
        if (!p->trainable) continue;
        tensors.emplace_back(p->name, Tensor::borrowed(window.data() + offset, p->value.shape()));
        offset += p->value.numel();
      }
      io::write_tensors(model_dir + "/ps-0.h5", tensors);
    }
    const int64_t reply[kHeaderLen] = {0, 0, 0, 0};
    world.send(reply, kHeaderLen, chief, kReply);
  }
  window.release();
  return stats;
}

const StrategyInfo& hogwild_strategy() {
  static const StrategyInfo info{
      .about = {.names = {"Hogwild"},
                .doc = "workers of one node update one shared copy without locks"},
      .presets = {{"hogwild", json::object()}},
      .configure = [](Options&, StrategySpec& s) {
        s.exchange = Exchange::shared;
        s.local_update = true;
      }};
  return info;
}

}  // namespace drun::distributed
