#include "distributed/strategy.hpp"

#include "distributed/comm.hpp"

namespace drun::distributed {

void check_same_variables(Communicator& workers, std::span<Param* const> params,
                          const std::string& strategy) {
  std::string mine;
  for (const Param* p : params) mine += p->name + p->value.shape().str() + ";";
  std::string chief = mine;
  workers.broadcast(chief, 0);
  if (chief == mine) return;
  size_t i = 0;
  while (i < mine.size() && i < chief.size() && mine[i] == chief[i]) ++i;
  const size_t from = mine.rfind(';', i == 0 ? 0 : i - 1);
  const size_t start = from == std::string::npos ? 0 : from + 1;
  throw UsageError(strategy + ": worker " + std::to_string(workers.rank()) +
                   " holds other variables than the chief, first difference at '" +
                   mine.substr(start, mine.find(';', start) - start) + "' vs the chief's '" +
                   chief.substr(start, chief.find(';', start) - start) + "'");
}

void broadcast_from_chief(Communicator& workers, std::span<Param* const> params) {
  for (Param* p : params) {
    if (p->value.device() == Device::cpu) {
      workers.broadcast(p->value.f32(), p->value.numel(), 0);
      continue;
    }
    Tensor host = p->value.to(Device::cpu);  // once, before training: MPI sees host memory
    workers.broadcast(host.f32(), host.numel(), 0);
    p->value.copy_from(host);
  }
}

}  // namespace drun::distributed
