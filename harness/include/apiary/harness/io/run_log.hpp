// run_log: the run's log (spdlog). One asynchronous logger with two sinks: stderr at
// --log-level (warn by default, so scripts see only what needs attention) and the log file at
// info or finer (beside the report by default). Messages are formatted on the calling thread
// and written by spdlog's own thread; when its queue is full the oldest message is dropped
// (overrun_oldest), so logging never blocks the writer. Drops are counted and reported.
//
// What is logged, at info: the start and the stop, Hive's queen lines ("Full block cycle: ...",
// "Blocks produced in average time of ..."), the writer-loop breakdown every 30 s as Hive's
// chain_plugin prints it, and the colony's per-thread statistics; at debug: one line per
// block; warnings: a debug or sanitizer build, other processes taking over 10% of the machine,
// and a stall.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/logger.h>

namespace spdlog::details {
class thread_pool;
}  // namespace spdlog::details

#include "apiary/core/base/named_enum.hpp"

namespace apiary::harness {

enum class log_level : std::uint8_t { trace, debug, info, warn, error, off };
inline constexpr std::array<core::enum_name<log_level>, 6> log_level_names{{{"trace", log_level::trace},
                                                                            {"debug", log_level::debug},
                                                                            {"info", log_level::info},
                                                                            {"warn", log_level::warn},
                                                                            {"error", log_level::error},
                                                                            {"off", log_level::off}}};

class run_log {
 public:
  // Opens the log: stderr at `console`, the file (empty: none) at info or `console` if finer.
  // Throws std::runtime_error naming the file when it cannot be opened.
  run_log(log_level console, const std::string& file);
  ~run_log();  // close()
  run_log(const run_log&) = delete;
  run_log& operator=(const run_log&) = delete;

  spdlog::logger& operator*() const { return *logger_; }
  spdlog::logger* operator->() const { return logger_.get(); }
  // Messages dropped because the queue was full.
  std::uint64_t dropped() const;
  // Messages the log could not write (a full device, an I/O error), and the first error's
  // text; after close(). spdlog's thread counts them instead of printing its own line.
  std::uint64_t write_errors() const { return write_errors_; }
  const std::string& first_write_error() const { return first_write_error_; }
  // Writes what is queued and waits until it is written.
  void close();
  // After close(): one line in the log file only (none: nothing), for what the command
  // prints on stderr in its own form (the run's error).
  void file_only(spdlog::level::level_enum level, std::string_view text);

 private:
  std::shared_ptr<spdlog::details::thread_pool> pool_;
  std::shared_ptr<spdlog::logger> logger_;
  spdlog::sink_ptr file_;
  std::uint64_t dropped_at_close_ = 0;
  // Written by spdlog's one thread only, read after close() has joined it.
  std::uint64_t write_errors_ = 0;
  std::string first_write_error_;
};

// The log file that goes with a report: the same path with .log for .json.
std::string log_path_for(const std::string& report_path);

}  // namespace apiary::harness
