// Network probe for tools/scale: latency alpha and inverse bandwidth beta of
// the ranks' links, from MPI allreduces (non-blocking, as training's) of 4
// bytes to 16 MiB over all ranks (medians of `--iters` per size) fitted to
// a ring's cost, t(s) = 2 (p - 1) (alpha + s / p beta), alpha from the small sizes and beta from
// the large ones (fit() below): the alpha and beta that tools/scale's ring
// formulas need. A ping-pong between rank 0 and the last rank is fitted too
// (t = alpha + s beta, one way: "pingpong"). Run under mpirun with the ranks
// where the links to measure are:
//   mpirun -np 2 build/tools/bench/net_probe            # within this node
//   (two nodes: one rank on each; tests/netns for a shaped two-node link)
// Rank 0 prints one JSON line: {"ranks", "alpha_s", "beta_s_per_byte",
// "bandwidth_gbit_s", "pingpong": {...}, "points": [[bytes, ping-pong one way
// seconds, allreduce seconds], ...]}.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "distributed/comm.hpp"

using drun::distributed::Communicator;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// t = alpha + x beta from points (x, t): beta the least-squares slope of
// the points with x of at least `large` (bandwidth-bound), alpha the median
// of t over the points with x of at most `small` (latency-bound). Robust to a
// loaded machine's outliers, which a single weighted fit is not.
std::pair<double, double> fit(const std::vector<std::pair<double, double>>& points, double small,
                              double large) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  std::vector<double> latency;
  for (const auto& [x, t] : points) {
    if (x <= small) latency.push_back(t);
    if (x < large) continue;
    n += 1;
    sx += x;
    sy += t;
    sxx += x * x;
    sxy += x * t;
  }
  const double beta = n >= 2 ? (n * sxy - sx * sy) / (n * sxx - sx * sx) : sy / std::max(sx, 1.0);
  return {latency.empty() ? 0.0 : median(latency), std::max(beta, 1e-15)};
}

}  // namespace

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
  const int p = comm.size();
  std::vector<float> buffer(static_cast<size_t>(max_bytes / 4), 1.0f);
  // One-way seconds of a ping-pong between rank 0 and the last rank, and
  // seconds of an allreduce over all ranks, per size: medians after warm-up.
  std::vector<std::array<double, 3>> points;  // bytes, ping-pong one way, allreduce
  for (int64_t bytes = 4; bytes <= max_bytes; bytes *= 4) {
    const int64_t n = bytes / 4;
    std::vector<double> pingpong, allreduce;
    for (int it = 0; it < iters + 3; ++it) {
      comm.barrier();
      auto start = std::chrono::steady_clock::now();
      if (comm.rank() == 0) {
        comm.send(buffer.data(), n, peer, 1);
        comm.recv(buffer.data(), n, peer, 2);
      } else if (comm.rank() == peer) {
        comm.recv(buffer.data(), n, 0, 1);
        comm.send(buffer.data(), n, 0, 2);
      }
      const double t = seconds_since(start);
      comm.barrier();
      start = std::chrono::steady_clock::now();
      // As AllReduce exchanges a bucket (all_reduce.cpp): non-blocking, then
      // waited for. Over a TCP link of 50-200 Mbit/s the blocking call was
      // 1.6x slower, and a probe of it predicted steps 20 % too long.
      comm.allreduce_sum_start(buffer.data(), n);
      comm.wait_all();
      const double r = seconds_since(start);
      std::fill(buffer.begin(), buffer.begin() + n, 1.0f);
      if (it < 3) continue;  // the first rounds warm the connection up
      pingpong.push_back(t / 2);
      allreduce.push_back(r);
    }
    points.push_back({static_cast<double>(bytes), median(pingpong), median(allreduce)});
  }
  if (comm.rank() != 0) return 0;
  // Ping-pong: t = alpha + s beta. Allreduce, as a ring of p ranks would do
  // it: t = 2 (p - 1) alpha + 2 (p - 1) / p s beta, i.e. the same fit of
  // t / (2 (p - 1)) against s / p.
  std::vector<std::pair<double, double>> pp, ar;
  for (const auto& [s, t, r] : points) {
    pp.emplace_back(s, t);
    ar.emplace_back(s / p, r / (2.0 * (p - 1)));
  }
  const auto [alpha, beta] = fit(pp, 4096, 262144);
  const auto [ar_alpha, ar_beta] = fit(ar, 4096.0 / p, 262144.0 / p);
  std::printf(
      "{\"ranks\": %d, \"alpha_s\": %.9g, \"beta_s_per_byte\": %.9g, \"bandwidth_gbit_s\": %.4g, "
      "\"pingpong\": {\"alpha_s\": %.9g, \"beta_s_per_byte\": %.9g}, \"points\": [",
      p, ar_alpha, ar_beta, 8e-9 / ar_beta, alpha, beta);
  for (size_t i = 0; i < points.size(); ++i)
    std::printf("%s[%.0f, %.9g, %.9g]", i ? ", " : "", points[i][0], points[i][1], points[i][2]);
  std::printf("]}\n");
  return 0;
}
