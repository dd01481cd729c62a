#include "apiary/harness/io/input_file.hpp"
#include "apiary/harness/io/text_format.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace apiary::harness {

std::string file_kind(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

namespace {

// Closes the descriptor however the read ends.
struct descriptor {
  int fd;
  ~descriptor() {
    if (fd >= 0) close(fd);
  }
};

// Opens the regular file at path and checks its size: the descriptor and the size.
std::uint64_t open_input(const std::string& path, std::uint64_t max_bytes, std::string_view what, descriptor& d) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked before reading.
  d.fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (d.fd < 0) {
    if (errno == ENOENT) throw input_error("no such file");
    throw input_error(std::string("cannot be read: ") + std::strerror(errno));
  }
  struct stat st {};
  if (fstat(d.fd, &st) != 0) throw input_error(std::string("cannot be read: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw input_error("a directory, not a " + std::string(what));
  if (!S_ISREG(st.st_mode)) throw input_error("not a regular file (" + file_kind(st.st_mode) + ")");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    throw input_error(bytes_text(size) + ", more than the " + bytes_text(max_bytes) + " a " + std::string(what) +
                      " may have here");
  return size;
}

// Reads size bytes into out.
void read_whole(const descriptor& d, char* out, std::size_t size) {
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = read(d.fd, out + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw input_error(std::string("cannot be read: ") + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got != size) throw input_error("changed while it was read (it shrank)");
}

}  // namespace

std::string read_input_file(const std::string& path, std::uint64_t max_bytes, std::string_view what) {
  descriptor d{-1};
  std::string content(open_input(path, max_bytes, what, d), '\0');
  read_whole(d, content.data(), content.size());
  return content;
}

binary_input_file::binary_input_file(const std::string& path, std::uint64_t max_bytes, std::string_view what) {
  descriptor d{-1};
  size_ = open_input(path, max_bytes, what, d);
  data_ = std::make_unique_for_overwrite<std::uint8_t[]>(size_);  // not zero-filled
  read_whole(d, reinterpret_cast<char*>(data_.get()), size_);
}

}  // namespace apiary::harness
