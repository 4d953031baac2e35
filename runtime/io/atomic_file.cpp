#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace drun::io {

void write_text_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw UsageError("cannot write " + tmp + ": " + std::strerror(errno));
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw UsageError("cannot write " + path + ": " + std::strerror(errno));
  }
}

void write_json_atomically(const std::string& path, const json& value) {
  write_text_atomically(path, value.dump(2) + "\n");
}

}  // namespace drun::io
