#include "train/example_log.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace drun::train {

std::unique_ptr<ExampleLog> ExampleLog::from_environment() {
  const char* dir = std::getenv("DRUN_EXAMPLE_LOG");
  if (!dir || !*dir) return nullptr;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::filesystem::create_directories(dir);
  const std::string path = std::string(dir) + "/" + host + "-" + std::to_string(getpid()) + ".log";
  std::FILE* out = std::fopen(path.c_str(), "a");
  if (!out)
    throw std::runtime_error("DRUN_EXAMPLE_LOG: cannot write " + path + ": " +
                             std::strerror(errno));
  return std::make_unique<ExampleLog>(out);
}

ExampleLog::~ExampleLog() {
  std::fclose(out_);
}

void ExampleLog::record(int64_t step, int64_t epoch, const std::vector<int64_t>& examples,
                        int workers) {
  for (int64_t e : examples)
    std::fprintf(out_, "%lld %lld %lld %d\n", static_cast<long long>(step),
                 static_cast<long long>(epoch), static_cast<long long>(e), workers);
  std::fflush(out_);
}

}  // namespace drun::train
