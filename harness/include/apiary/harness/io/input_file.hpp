// input_file: how apiary reads a file it is given (a config file, a saved workload, a state
// snapshot). Only a regular file is read, and only when its size is within what the caller allows: the file
// is opened without blocking and checked before a byte is read, so a FIFO cannot hang the
// command and /dev/zero cannot fill the memory.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace apiary::harness {

// Why an input cannot be read: the message names no path (the caller says which option).
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a path that is no regular file is, from its st_mode: "a symbolic link" (lstat's),
// "a directory", "a FIFO", "a character device", "a block device", "a socket".
std::string file_kind(mode_t mode);

// The whole content of the regular file at `path`, at most `max_bytes` long. `what` names
// the kind of file in messages ("config file"). Throws input_error: "no such file",
// "a directory, not a config file", "not a regular file (a FIFO)", "cannot be read: ...",
// or "N bytes, more than ...".
std::string read_input_file(const std::string& path, std::uint64_t max_bytes, std::string_view what);

// The same file read whole into a buffer that is not zero-filled first (std::string would
// write every byte twice), for a large binary file read at memory speed: the same checks and
// errors. Not mapped: a file truncated while mapped would end the process with SIGBUS, while a
// read sees it shrink and says so.
class binary_input_file {
 public:
  binary_input_file(const std::string& path, std::uint64_t max_bytes, std::string_view what);

  std::span<const std::uint8_t> bytes() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<std::uint8_t[]> data_;
  std::size_t size_ = 0;
};

}  // namespace apiary::harness
