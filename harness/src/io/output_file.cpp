#include "apiary/harness/io/output_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string_view>

#include "apiary/core/base/mutex.hpp"
#include "apiary/harness/io/error_text.hpp"

namespace apiary::harness {

namespace fs = std::filesystem;

namespace {

std::runtime_error failure(const std::string& path, const std::string& why) {
  return std::runtime_error("cannot write " + shown_path(path) + ": " + why);
}

// What a file that apiary will not replace is.
std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "it is a directory";
  if (S_ISBLK(mode))
    return "a block device, not a regular file (apiary writes regular files, or through a "
           "character device or a FIFO)";
  if (S_ISSOCK(mode)) return "a socket, not a regular file";
  return "not a regular file";
}

// Where the bytes for a regular (or missing) path go: the file a link names, followed by hand
// through a chain of links (even a dangling one), so the link stays a link; else the path
// itself. The allocations are the same whether the file exists or not, so the heap a later
// measurement starts from does not depend on it (apiary replay's instruction counts).
std::string regular_target(const std::string& path) {
  fs::path p = path;
  struct stat st {};
  for (int hops = 0; hops < 40 && lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode); ++hops) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_relative() ? p.parent_path() / target : target;
  }
  return p.string();
}

// /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N name a descriptor this process has
// open (a file the shell redirected, a pipe): written through that descriptor, never replaced
// by a file of the same name.
std::optional<int> descriptor_of(std::string_view path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!path.starts_with(prefix) || path.size() == prefix.size() || path.size() > prefix.size() + 6) continue;
    int fd = 0;
    for (char c : path.substr(prefix.size())) {
      if (c < '0' || c > '9') return std::nullopt;
      fd = fd * 10 + (c - '0');
    }
    return fd;
  }
  return std::nullopt;
}

std::optional<std::string> check_descriptor(const std::string& path, int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return "cannot write " + shown_path(path) + ": not an open descriptor";
  if ((flags & O_ACCMODE) == O_RDONLY) return "cannot write " + shown_path(path) + ": open for reading only";
  return std::nullopt;
}

// Creates a file of our own beside `base` (base.tmp-PID-N, exclusively): its descriptor, or
// -1 with errno set. `name` receives its path.
int create_beside(const std::string& base, mode_t mode, std::string& name) {
  for (int n = 0; n < 1000; ++n) {
    name = base + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(n);
    const int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// Makes a rename durable (best effort: some file systems refuse to sync a directory).
void sync_directory(const fs::path& file) {
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)fsync(fd);
  close(fd);
}

bool a_directory_name(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  return path.back() == '/' || name == "." || name == "..";
}

// FIFOs opened by check_output(), held until their output is written: the reader sees no
// end of file in between, and a FIFO with no reader is found before the run, not after it.
core::mutex held_mutex;
std::map<std::string, int> held_fifos APIARY_GUARDED_BY(held_mutex);

// Opens a device or FIFO to write through, without blocking on a FIFO: -1 and errno, or
// the descriptor (blocking again).
int open_through(const std::string& path, bool fifo) {
  if (fifo) {
    core::lock_guard lock(held_mutex);
    if (auto it = held_fifos.find(path); it != held_fifos.end()) {
      const int fd = it->second;
      held_fifos.erase(it);
      return fd;
    }
  }
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | (fifo ? O_NONBLOCK : 0));
  if (fd >= 0 && fifo) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::string through_error(int err) { return err == ENXIO ? "a FIFO with no reader" : std::strerror(err); }

// A binary output on a stream: its one line.
std::string binary_on_a_stream(const std::string& path, const char* what) {
  return "cannot write " + shown_path(path) + ": " + what +
         "; a binary file goes to a file (or /dev/null), where it is written whole and loads";
}

std::optional<std::string> check_device(const std::string& path, mode_t mode, output_use use) {
  if (S_ISFIFO(mode) && use == output_use::binary) return binary_on_a_stream(path, "a FIFO, a stream");
  if (!S_ISFIFO(mode)) {
    if (access(path.c_str(), W_OK) != 0) return "cannot write " + shown_path(path) + ": " + std::strerror(errno);
    return std::nullopt;
  }
  if (use == output_use::stream)
    return "cannot write " + shown_path(path) +
           ": a FIFO; the log is written while the run goes, so give a regular file or a device";
  const int fd = open_through(path, true);
  if (fd < 0) return "cannot write " + shown_path(path) + ": " + through_error(errno);
  core::lock_guard lock(held_mutex);
  if (!held_fifos.emplace(path, fd).second) close(fd);
  return std::nullopt;
}

// The directories made while a made_directories is alive (noting), in the order made.
core::mutex made_mutex;
bool noting APIARY_GUARDED_BY(made_mutex) = false;
std::vector<fs::path> made APIARY_GUARDED_BY(made_mutex);

// The one line of a file that cannot be made beside `target`: a directory that refuses it is
// named.
std::string cannot_create_in(const std::string& path, const fs::path& target, int err) {
  if (err != EACCES && err != EROFS && err != EPERM)
    return "cannot write " + shown_path(path) + ": " + std::strerror(err);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  return "cannot write " + shown_path(path) + ": its directory " + shown_path(dir.string()) +
         " does not let apiary create a file (" + std::strerror(err) + ")";
}

}  // namespace

std::error_code make_directories(const fs::path& dir) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (std::size_t i = missing.size(); i-- > 0;) {  // the outermost first
    if (!fs::create_directory(missing[i], ec)) {
      if (ec) return ec;
      continue;
    }
    core::lock_guard lock(made_mutex);
    if (noting) made.push_back(missing[i]);
  }
  return {};
}

made_directories::made_directories() {
  core::lock_guard lock(made_mutex);
  noting = true;
  made.clear();
}

made_directories::~made_directories() {
  core::lock_guard lock(made_mutex);
  for (std::size_t i = made.size(); i-- > 0;) {  // the deepest first
    std::error_code ec;
    fs::remove(made[i], ec);  // only an empty directory goes
  }
  made.clear();
  noting = false;
}

void made_directories::keep() {
  core::lock_guard lock(made_mutex);
  made.clear();
  noting = false;
}

std::optional<std::string> check_output(const std::string& path, output_use use) {
  if (path.empty()) return std::nullopt;
  if (auto fd = descriptor_of(path)) {
    if (use == output_use::binary) return binary_on_a_stream(path, "an open descriptor, a stream");
    return check_descriptor(path, *fd);
  }
  if (a_directory_name(path)) return "cannot write " + shown_path(path) + ": a directory name, not a file";
  struct stat st {};
  const bool exists = stat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) return "cannot write " + shown_path(path) + ": " + std::strerror(errno);
  if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) return check_device(path, st.st_mode, use);
  if (exists && !S_ISREG(st.st_mode)) return "cannot write " + shown_path(path) + ": " + kind_of(st.st_mode);
  if (exists && access(path.c_str(), W_OK) != 0)
    return "cannot write " + shown_path(path) + ": " + std::strerror(errno);

  const fs::path target = regular_target(path);
  if (target.has_parent_path()) {
    if (const std::error_code ec = make_directories(target.parent_path()))
      return "cannot create the directory " + shown_path(target.parent_path().string()) + ": " + ec.message();
  }
  // Probe with a file of our own beside it: the rename into place needs the directory.
  std::string probe;
  const int fd = create_beside(target.string(), 0600, probe);
  if (fd < 0) return cannot_create_in(path, target, errno);
  close(fd);
  unlink(probe.c_str());
  return std::nullopt;
}

std::string user_cache_dir(const char* variable, std::string_view leaf) {
  if (const char* set = std::getenv(variable); set != nullptr && *set != '\0')
    return std::string_view(set) == "off" ? std::string() : std::string(set);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/')
    return std::string(xdg) + "/apiary/" + std::string(leaf);
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/')
    return std::string(home) + "/.cache/apiary/" + std::string(leaf);
  return {};
}

bool writes_through(const std::string& path) {
  struct stat st {};
  if (descriptor_of(path)) return true;
  return stat(path.c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

namespace {

struct identity {
  bool exists = false;
  bool device = false;  // a character device
  dev_t dev = 0;        // the file's, or when it does not exist yet, its directory's
  ino_t ino = 0;
  std::string target;  // regular_target(): its last component names a file not there yet
                       // (absolute and normal when its directory is not there either)
};

std::string_view last_component(std::string_view p) {
  const std::size_t slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

// A file by what it is, not how it is spelled: its device and inode; a file not there yet by
// its directory's and its name.
identity identify(const std::string& path) {
  struct stat st {};
  if (auto fd = descriptor_of(path); fd && fstat(*fd, &st) == 0)
    return {true, S_ISCHR(st.st_mode), st.st_dev, st.st_ino, {}};
  identity id;
  id.target = regular_target(path);
  if (stat(id.target.c_str(), &st) == 0) {
    id.exists = true;
    id.device = S_ISCHR(st.st_mode);
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    return id;
  }
  // The directory, without a heap allocation (see regular_target()).
  char dir[PATH_MAX];
  const std::size_t slash = id.target.rfind('/');
  const std::size_t len = slash == std::string::npos ? 0 : std::max<std::size_t>(slash, 1);
  if (len >= sizeof dir) return id;  // too long to exist: compared by its spelling
  std::memcpy(dir, len == 0 ? "." : id.target.c_str(), len == 0 ? 1 : len);
  dir[len == 0 ? 1 : len] = '\0';
  if (stat(dir, &st) == 0) {
    id.dev = st.st_dev;
    id.ino = st.st_ino;
  } else {  // its directory is not there yet either: compared by its absolute, normal spelling
    std::error_code ec;
    id.target = fs::absolute(id.target, ec).lexically_normal().string();
  }
  return id;
}

bool same(const identity& a, const identity& b) {
  if (a.exists != b.exists) return false;
  if (a.exists) return a.dev == b.dev && a.ino == b.ino;
  if (a.ino == 0 || b.ino == 0) return a.target == b.target;
  return a.dev == b.dev && a.ino == b.ino && last_component(a.target) == last_component(b.target);
}

}  // namespace

std::optional<std::string> check_distinct(const std::vector<named_path>& inputs,
                                          const std::vector<named_path>& outputs) {
  std::vector<std::pair<const named_path*, identity>> seen;
  for (const named_path& in : inputs)
    if (!in.path.empty()) seen.emplace_back(&in, identify(in.path));
  const std::size_t input_count = seen.size();
  for (const named_path& out : outputs) {
    if (out.path.empty()) continue;
    const identity id = identify(out.path);
    for (std::size_t i = 0; i < seen.size(); ++i) {
      const auto& [other, other_id] = seen[i];
      if (!same(id, other_id) || (i >= input_count && id.device)) continue;
      const std::string head = out.option + " " + shown_path(out.path) + ": the same file as " + other->option;
      return i < input_count ? head + ", an input (an output never replaces what the run reads)"
                             : head + " (each output needs a file of its own)";
    }
    seen.emplace_back(&out, id);
  }
  return std::nullopt;
}

std::optional<std::string> check_not_a_directory_of(const named_path& dir, const std::vector<named_path>& outputs) {
  if (dir.path.empty()) return std::nullopt;
  const identity id = identify(dir.path);
  for (const named_path& out : outputs)
    if (!out.path.empty() && same(id, identify(out.path)))
      return dir.option + " " + shown_path(dir.path) + ": the same path as " + out.option +
             ", which is a file (the directory's files need a directory of their own)";
  return std::nullopt;
}

// ---- output_file --------------------------------------------------------------------------

output_file::output_file(const std::string& path) : path_(path), final_(path) {
  if (auto fd = descriptor_of(path)) {
    fd_ = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
    if (fd_ < 0) throw failure(path, std::strerror(errno));
    return;
  }
  struct stat st {};
  const bool exists = stat(path.c_str(), &st) == 0;
  if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    // Written through. A FIFO opens without blocking: no reader is an error, not a hang.
    fd_ = open_through(path, S_ISFIFO(st.st_mode));
    if (fd_ < 0) throw failure(path, through_error(errno));
    return;
  }
  if (exists && !S_ISREG(st.st_mode)) throw failure(path, kind_of(st.st_mode));
  if (!path.empty() && a_directory_name(path)) throw failure(path, "a directory name, not a file");
  final_ = regular_target(path);
  const fs::path target = final_;
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);  // a failure shows below
  open_temporary(exists ? static_cast<int>(st.st_mode & 07777) : -1);
}

output_file::output_file(const std::string& path, own_file_t) : path_(path), final_(path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw failure(path, S_ISLNK(st.st_mode) ? "a symbolic link, not a file of apiary's own" : kind_of(st.st_mode));
  open_temporary(-1);
}

void output_file::open_temporary(int mode) {
  fd_ = create_beside(final_, 0666, temp_);
  if (fd_ < 0) {
    const int e = errno;
    temp_.clear();
    throw std::runtime_error(cannot_create_in(path_, final_, e));
  }
  // A replaced file keeps its permissions; a new one gets 0666 less the umask, as fopen().
  if (mode >= 0) (void)fchmod(fd_, static_cast<mode_t>(mode));
}

output_file::~output_file() {
  if (fd_ >= 0) close(fd_);
  if (!committed_ && !temp_.empty()) unlink(temp_.c_str());
}

void output_file::write(const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw failure(path_, std::strerror(errno));
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void output_file::commit() {
  if (committed_) return;
  if (!temp_.empty() && fsync(fd_) != 0) throw failure(path_, std::strerror(errno));
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0 && errno != EINTR) throw failure(path_, std::strerror(errno));
  if (!temp_.empty()) {
    if (std::rename(temp_.c_str(), final_.c_str()) != 0) throw failure(path_, std::strerror(errno));
    sync_directory(final_);
  }
  committed_ = true;
}

void save_file(const std::string& path, const core::out_buffer& content) {
  output_file f(path);
  f.write(content.data(), content.size());
  f.commit();
}

// ---- standby_file -------------------------------------------------------------------------

standby_file::standby_file(const std::string& path, std::string head) : head_(std::move(head)) {
  if (path.empty() || writes_through(path) || a_directory_name(path)) return;
  target_ = regular_target(path);
  temp_ = target_ + ".tmp-" + std::to_string(getpid()) + "-aborted";
  struct stat st {};
  if (stat(target_.c_str(), &st) == 0) mode_ = static_cast<int>(st.st_mode & 07777);
}

bool standby_file::put(const char* tail, std::size_t size) const noexcept {
  if (!ready()) return false;
  int fd = open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST && unlink(temp_.c_str()) == 0)  // this process's own, left over
    fd = open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  if (mode_ >= 0) (void)fchmod(fd, static_cast<mode_t>(mode_));
  const auto write_all = [fd](const char* p, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  };
  const bool written = write_all(head_.data(), head_.size()) && write_all(tail, size) && fsync(fd) == 0;
  const bool closed = close(fd) == 0;
  if (written && closed && rename(temp_.c_str(), target_.c_str()) == 0) return true;
  unlink(temp_.c_str());
  return false;
}

std::optional<std::string> check_writable(const std::string& path) { return check_output(path); }

// ---- output_locks -------------------------------------------------------------------------

namespace {

std::string lock_path_of(const std::string& target) {
  const fs::path p(target);
  std::string name = p.filename().string();
  name.insert(name.begin(), '.');
  name.append(".lock");
  return (p.parent_path() / name).string();
}

// The first line of every lock file apiary makes, by which it knows one a killed run left.
constexpr std::string_view lock_marker = "apiary output lock\n";

// Whether `path` still names the file open as `fd`.
bool same_file(int fd, const std::string& path) {
  struct stat a {};
  struct stat b {};
  return fstat(fd, &a) == 0 && lstat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Marks a lock file just created: the problem, or nullopt.
std::optional<std::string> mark_lock(int fd) {
  const std::string text = std::string(lock_marker) + "pid " + std::to_string(getpid()) + "\n";
  if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return std::string("cannot write its lock: ") + std::strerror(errno);
  return std::nullopt;
}

// A file found at the lock's name, now locked by this process: nullopt when it is a lock a
// killed apiary left (a regular file starting with the marker, still at that name), else why
// it is not one.
std::optional<std::string> lock_left_behind(int fd, const std::string& lock) {
  const std::string foreign = "a file named like its lock is there (" + shown_path(lock) +
                              ") and is no lock of apiary's: move it, or give another path";
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return foreign;
  char head[lock_marker.size()];
  if (pread(fd, head, sizeof head, 0) != static_cast<ssize_t>(sizeof head) ||
      std::string_view(head, sizeof head) != lock_marker)
    return foreign;
  if (!same_file(fd, lock)) return "its lock " + shown_path(lock) + " was just replaced; try again";
  if (ftruncate(fd, 0) != 0) return "cannot write its lock " + shown_path(lock) + ": " + std::strerror(errno);
  return mark_lock(fd);
}

}  // namespace

std::optional<std::string> output_locks::take(const std::vector<named_path>& outputs) {
  for (const named_path& out : outputs) {
    if (out.path.empty() || writes_through(out.path) || descriptor_of(out.path)) continue;
    const std::string lock = lock_path_of(regular_target(out.path));
    if (std::any_of(held_.begin(), held_.end(), [&lock](const held& h) { return h.path == lock; })) continue;
    if (auto problem = take_one(out, lock)) {
      release();
      return problem;
    }
  }
  return std::nullopt;
}

std::optional<std::string> output_locks::take_one(const named_path& out, const std::string& lock) {
  const std::string head = out.option + " " + shown_path(out.path) + ": ";
  // Ours from the start: created exclusively, locked, then marked.
  int fd = open(lock.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  const bool created = fd >= 0;
  const bool there = !created && errno == EEXIST;
  struct stat st {};
  // Whatever is there is opened only when it is a regular file (never a link, a FIFO, a device).
  if (there && lstat(lock.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return head + "a " + (S_ISLNK(st.st_mode) ? "symbolic link" : "file") + " named like its lock is there (" +
           shown_path(lock) + ") and is no lock of apiary's: move it, or give another path";
  if (there) fd = open(lock.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    return head + "cannot make its lock " + shown_path(lock) + ": " + std::strerror(e);
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    close(fd);
    if (e == EWOULDBLOCK)
      return head + "another apiary is writing it (its lock " + shown_path(lock) + " is held); give another path";
    return head + "cannot lock " + shown_path(lock) + ": " + std::strerror(e);
  }
  const std::optional<std::string> foreign = created ? mark_lock(fd) : lock_left_behind(fd, lock);
  if (foreign) {
    if (created) unlink(lock.c_str());
    close(fd);
    return head + *foreign;
  }
  held_.push_back({lock, fd});
  return std::nullopt;
}

output_locks::~output_locks() { release(); }

void output_locks::release() {
  // Removed while still held, and only while the name is still this lock's, so none is left
  // behind and no file that took its name is removed. (A process that opened it in the
  // instant before may then lock a file that is gone: a window of the run's last moment.)
  for (const held& h : held_) {
    if (same_file(h.fd, h.path)) unlink(h.path.c_str());
    close(h.fd);
  }
  held_.clear();
}

}  // namespace apiary::harness
