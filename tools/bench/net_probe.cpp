// Network probe for tools/scale: latency alpha and inverse bandwidth beta of
// the link between rank 0 and the last rank, from a ping-pong over message
// sizes of 4 bytes to 16 MiB (a one-way time is half a round trip; medians
// of `--iters` round trips per size), fitted as t(s) = alpha + s * beta by
// least squares, the small sizes weighted as much as the large ones (relative
// errors). Run under mpirun with the ranks where the link to measure is:
//   mpirun -np 2 build/tools/bench/net_probe            # within this node
//   (two nodes: one rank on each; tests/netns for a shaped two-node link)
// Rank 0 prints one JSON line: {"alpha_s", "beta_s_per_byte", "bandwidth_gbit_s",
// "points": [[bytes, seconds one way], ...]}.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "distributed/comm.hpp"

using drun::distributed::Communicator;

int main(int argc, char** argv) {
  Communicator comm(&argc, &argv);
  int iters = 30;
  int64_t max_bytes = int64_t{16} << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--iters") iters = std::atoi(argv[i + 1]);
    if (a == "--max-mib") max_bytes = static_cast<int64_t>(std::atof(argv[i + 1]) * (1 << 20));
  }
  if (comm.size() < 2) {
    std::fprintf(stderr, "net_probe: run it with 2 or more ranks (mpirun -np 2)\n");
    return 2;
  }
  const int peer = comm.size() - 1;
  std::vector<float> buffer(static_cast<size_t>(max_bytes / 4), 1.0f);
  std::vector<std::pair<double, double>> points;  // bytes, one-way seconds
  for (int64_t bytes = 4; bytes <= max_bytes; bytes *= 4) {
    const int64_t n = bytes / 4;
    std::vector<double> times;
    for (int it = 0; it < iters + 3; ++it) {
      comm.barrier();
      const auto start = std::chrono::steady_clock::now();
      if (comm.rank() == 0) {
        comm.send(buffer.data(), n, peer, 1);
        comm.recv(buffer.data(), n, peer, 2);
      } else if (comm.rank() == peer) {
        comm.recv(buffer.data(), n, 0, 1);
        comm.send(buffer.data(), n, 0, 2);
      }
      const double t =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (it >= 3) times.push_back(t / 2);  // the first rounds warm up the connection
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    points.emplace_back(static_cast<double>(bytes), times[times.size() / 2]);
  }
  if (comm.rank() != 0) return 0;
  // Weighted least squares of t = alpha + s beta with weights 1/t^2.
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [s, t] : points) {
    const double w = 1 / (t * t);
    sw += w;
    sx += w * s;
    sy += w * t;
    sxx += w * s * s;
    sxy += w * s * t;
  }
  const double beta = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
  const double alpha = std::max(0.0, (sy - beta * sx) / sw);
  std::printf(
      "{\"alpha_s\": %.9g, \"beta_s_per_byte\": %.9g, \"bandwidth_gbit_s\": %.4g, \"points\": [",
      alpha, beta, 8e-9 / beta);
  for (size_t i = 0; i < points.size(); ++i)
    std::printf("%s[%.0f, %.9g]", i ? ", " : "", points[i].first, points[i].second);
  std::printf("]}\n");
  return 0;
}
