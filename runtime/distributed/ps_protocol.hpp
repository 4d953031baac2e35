// What workers and parameter servers say to each other, and which server
// holds which variable. Both sides build the same Layout from the same model,
// so a message is a flat array of floats: the server's variables, in order.
//
// A request is a header {op, version, 0, 0} (tag kRequest) and, for ops that
// carry data, the payload (tag kPayload); the chief's init carries in
// header[2] the global step of the checkpoint the job resumes from (-1: none). `version` is the
// server version the worker's contribution was computed from. A reply is a header {version,
// staleness, chief done (0/1), 0} (tag kReply) and the server's floats (tag kReplyPayload): its
// variables, or for the elastic exchange its centre variable before this worker's pull.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "distributed/comm.hpp"
#include "tensor/param.hpp"

namespace drun::distributed::ps {

enum Op : int64_t {
  kInit = 1,        // chief: the initial variables (payload)
  kPush = 2,        // payload; no reply
  kFetch = 3,       // reply: the variables
  kPushFetch = 4,   // payload; reply after it is applied (sync: after the round)
  kDone = 5,        // a worker has finished; no reply
  kChiefDone = 6,   // the chief has finished; text: the model directory; reply when all are
  kCheckpoint = 7,  // chief: write ckpt-<header[1]>.ps-<i>.h5; reply: a header once durable
};

enum Tag : int { kRequest = 7001, kPayload, kReply, kReplyPayload, kText };
constexpr int kHeaderLen = 4;

// The job's ranks by role, from every rank's own role (a collective over
// the world communicator: workers and servers call it at the same point).
// A server's shard of checkpoint `step`: model_dir/ckpt-<step>.ps-<index>.h5.
std::string shard_path(const std::string& model_dir, int64_t step, int index);

struct Roles {
  std::vector<int> servers;  // world ranks, in server order
  std::vector<int> workers;  // world ranks, in worker order; workers[0] is the chief
  int server_index(int world_rank) const;
};
Roles exchange_roles(Communicator& world, bool is_server);

// Where each trainable variable lives: its server and offset there.
struct Layout {
  struct Slot {
    size_t param;    // index into the parameter list
    int server;      // index into Roles::servers
    int64_t offset;  // floats into that server's flat array
    int64_t numel;
  };
  std::vector<Slot> slots;
  std::vector<int64_t> server_floats;  // floats per server
  // Only trainable variables; the others (batch-norm statistics) stay local.
  Layout(std::span<Param* const> params, int servers, const std::string& policy);
};

}  // namespace drun::distributed::ps
