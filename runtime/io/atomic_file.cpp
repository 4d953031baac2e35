#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace drun::io {

void write_text_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const auto fail = [&](int err) {
    std::remove(tmp.c_str());
    throw UsageError("cannot write " + path + ": " +
                     (err ? std::strerror(err) : "short write (disk full?)"));
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail(errno);
  // A full disk (or a file size limit) shows as a short write first, then an
  // error on the next; close can report what an NFS server refused.
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : 0;
      ::close(fd);
      fail(err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail(err);
  }
  if (::close(fd) != 0) fail(errno);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail(errno);
}

void write_json_atomically(const std::string& path, const json& value) {
  write_text_atomically(path, value.dump(2) + "\n");
}

}  // namespace drun::io
