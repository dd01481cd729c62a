// output_file: how apiary writes what it leaves behind (a report, a dump, a saved workload).
// It writes regular files of its own and never replaces anything else:
//   - a path that does not exist, or names a regular file: the bytes go to a temporary file
//     beside it (created exclusively, so no other file is touched), which is fsync'ed and
//     then renamed over the path: a crash leaves the old file or the whole new one, never a
//     truncated one under the final name; an existing file keeps its permissions;
//   - a character device (/dev/null, /dev/full, a terminal) or a FIFO (`>(...)`, a named
//     pipe): written through, never replaced; a FIFO with no reader is an error, not a hang;
//   - /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: written through that open
//     descriptor, whatever it is (a file the shell redirected stays that file);
//   - anything else (a directory, a block device, a socket): refused.
// A symbolic link is followed: the file it names is written and the link stays.
// Errors are std::runtime_error("cannot write PATH: why"). Thread safety: one object per
// thread; the free functions are safe anywhere.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "apiary/core/protocol/buffer.hpp"

namespace apiary::harness {

// What an output is for: a file written at the end; a stream written while the run goes
// (the log: a FIFO without a reader would block its opening, so it is refused up front); or a
// binary file that must load whole (a state snapshot, a workload), which goes to a file or a
// character device only: on a FIFO or an open descriptor (/dev/stdout, /dev/fd/N) it would be
// followed by the summary, or cut short by a signal, and not load.
enum class output_use { file, stream, binary };

// Checks, before anything runs, that `path` can be written as `use` says (creating missing
// parent directories): the error message, or nullopt. Leaves no file behind. A FIFO is
// opened here (no reader: an error now, not after the run) and held open until its
// output_file writes it, so its reader sees no end of file in between.
std::optional<std::string> check_output(const std::string& path, output_use use = output_use::file);

// Creates `dir` and its missing parents, as check_output() does for an output's directory,
// noting each one made while a made_directories is alive: an error, or none.
std::error_code make_directories(const std::filesystem::path& dir);

// Held by a command from its first check of an output until it is accepted: the directories
// made meanwhile (check_output(), make_directories()) are removed again when it goes without
// keep(), those still empty, deepest first, so a refused command leaves nothing behind. One at
// a time, on the main thread.
class made_directories {
 public:
  made_directories();
  ~made_directories();
  made_directories(const made_directories&) = delete;
  made_directories& operator=(const made_directories&) = delete;
  // The command was accepted: what was made stays.
  void keep();
};

// Whether `path` names a character device or a FIFO, which outputs write through.
bool writes_through(const std::string& path);

// A path a command reads or writes, with the option that names it.
struct named_path {
  std::string option;  // "--report"
  std::string path;    // empty: not used
  output_use use = output_use::file;
};

// The first output that is also an input or another output (the same file, however it is
// spelled: links and relative paths are resolved), as an error line naming both options; or
// nullopt. Character devices may be given to several outputs (/dev/null twice is harmless).
std::optional<std::string> check_distinct(const std::vector<named_path>& inputs,
                                          const std::vector<named_path>& outputs);

// A directory an option fills with files (--hgrm-dir) that is also the path of another
// output, as an error line naming both options; or nullopt. Checked before check_distinct()
// and check_output(), which would create the directory.
std::optional<std::string> check_not_a_directory_of(const named_path& dir, const std::vector<named_path>& outputs);

// Locks beside a command's regular-file outputs (<dir>/.<name>.lock, flock'ed), so that two
// runs never write the same files at once (their interval logs would interleave, one report
// would replace the other's). A lock file is created exclusively (never through a link) and
// holds a marker line; held until destroyed, which removes the lock files still its own. A
// lock file a killed process left behind (the marker, not held) is taken over; any other file
// of that name is the user's: refused, never adopted or removed. Devices and FIFOs are not
// locked (several writers may share /dev/null).
class output_locks {
 public:
  output_locks() = default;
  ~output_locks();
  output_locks(const output_locks&) = delete;
  output_locks& operator=(const output_locks&) = delete;

  // Takes the lock of each output with a path: an error line naming the option and the path
  // when another process holds one (the locks taken so far are released), or nullopt.
  std::optional<std::string> take(const std::vector<named_path>& outputs);

 private:
  struct held {
    std::string path;
    int fd;
  };
  // The lock of one output: an error line, or nullopt with the lock held.
  std::optional<std::string> take_one(const named_path& out, const std::string& lock);
  void release();  // unlocks and removes every lock file held
  std::vector<held> held_;
};

// The directory of one of apiary's caches on this machine: $VARIABLE (a directory; "off": no
// cache, empty), else $XDG_CACHE_HOME/apiary/LEAF, else $HOME/.cache/apiary/LEAF; empty when
// none of them names an absolute place.
std::string user_cache_dir(const char* variable, std::string_view leaf);

class output_file {
 public:
  // Opens the output as above. Throws std::runtime_error naming the path.
  explicit output_file(const std::string& path);
  // A file apiary keeps for itself (the genesis key cache) at `path`, which must be missing or
  // a regular file the caller recognised as its own: never followed through a link nor written
  // through a device; replaced whole by renaming an exclusive temporary beside it over it.
  // Throws std::runtime_error naming the path.
  struct own_file_t {};
  output_file(const std::string& path, own_file_t);
  // Without commit(): closes and removes the temporary file (the old file, if any, stays).
  ~output_file();
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;

  void write(const void* data, std::size_t size);
  // fsync, close and rename into place (written through: close). Throws on any failure.
  void commit();

 private:
  void open_temporary(int mode);

  std::string path_;   // as given, for messages
  std::string final_;  // where the file goes (a link's target)
  std::string temp_;   // empty: written through
  int fd_ = -1;
  bool committed_ = false;
};

// A file written only if it is needed, possibly from a signal handler: the report a hard
// exit leaves (cycle/signals.hpp). Everything is prepared here (the bytes, the regular file a
// link leads to, the temporary's name, the mode); put() then only makes system calls, all
// async-signal-safe: it writes the prepared bytes and a tail to an exclusive temporary beside
// the target, fsyncs it and renames it into place. A path that writes_through() (a device, a
// FIFO, a redirected stdout) has no standby: half a report in a pipe is worse than none.
class standby_file {
 public:
  standby_file() = default;  // none: put() returns false
  standby_file(const std::string& path, std::string head);
  // Whether put() has somewhere to write.
  bool ready() const noexcept { return !target_.empty(); }
  // Writes head + tail into place; whether it is there. Async-signal-safe; leaves no
  // temporary behind on failure.
  bool put(const char* tail, std::size_t size) const noexcept;

 private:
  std::string target_;  // where the file goes (a link's target); empty: none
  std::string temp_;    // the temporary beside it
  std::string head_;
  int mode_ = -1;  // an existing file's permissions, kept; -1: a new file's
};

// Writes the buffer to path as output_file does: a regular file through an fsync'ed
// temporary file renamed into place (a reader never sees half a report), a character device
// or a FIFO written through, anything else refused. Throws std::runtime_error naming the path.
void save_file(const std::string& path, const core::out_buffer& content);

// Checks before the run that path can be written (check_output(): creating missing parent
// directories): an error message, or nullopt. Leaves no file behind.
std::optional<std::string> check_writable(const std::string& path);

}  // namespace apiary::harness
