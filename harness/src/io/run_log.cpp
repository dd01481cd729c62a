#include "apiary/harness/io/run_log.hpp"

#include <spdlog/async.h>
#include <spdlog/async_logger.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "apiary/core/base/thread_name.hpp"

namespace apiary::harness {

namespace {

// Enough for a long run's info lines between two writes of spdlog's thread; a burst of debug
// lines beyond it drops the oldest.
constexpr std::size_t queue_messages = 8192;

spdlog::level::level_enum to_spdlog(log_level l) {
  switch (l) {
    case log_level::trace: return spdlog::level::trace;
    case log_level::debug: return spdlog::level::debug;
    case log_level::info: return spdlog::level::info;
    case log_level::warn: return spdlog::level::warn;
    case log_level::error: return spdlog::level::err;
    case log_level::off: return spdlog::level::off;
  }
  return spdlog::level::off;
}

}  // namespace

run_log::run_log(log_level console, const std::string& file) {
  // The thread that writes the log, named for a profile (apiary run --profile).
  pool_ = std::make_shared<spdlog::details::thread_pool>(queue_messages, 1, [] { core::name_this_thread("log"); });
  std::vector<spdlog::sink_ptr> sinks;
  auto err = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  err->set_level(to_spdlog(console));
  err->set_pattern("apiary: %l: %v");
  sinks.push_back(err);
  spdlog::level::level_enum level = to_spdlog(console);
  if (!file.empty()) {
    std::shared_ptr<spdlog::sinks::basic_file_sink_mt> f;
    try {
      f = std::make_shared<spdlog::sinks::basic_file_sink_mt>(file, true);
    } catch (const spdlog::spdlog_ex& e) {
      throw std::runtime_error("--log-file " + file + ": " + e.what());
    }
    const auto file_level = std::min(to_spdlog(log_level::info), to_spdlog(console));
    f->set_level(file_level);
    f->set_pattern("%Y-%m-%dT%H:%M:%S.%f %L [%t] %v");
    sinks.push_back(f);
    file_ = f;
    level = std::min(level, file_level);
  }
  logger_ = std::make_shared<spdlog::async_logger>("apiary", sinks.begin(), sinks.end(), pool_,
                                                   spdlog::async_overflow_policy::overrun_oldest);
  logger_->set_level(level);
  logger_->flush_on(spdlog::level::warn);
  // On spdlog's thread (the sinks' errors are caught there): counted, the first one kept.
  logger_->set_error_handler([this](const std::string& what) {
    if (write_errors_++ == 0) first_write_error_ = what;
  });
}

run_log::~run_log() { close(); }

std::uint64_t run_log::dropped() const { return pool_ ? pool_->overrun_counter() : dropped_at_close_; }

void run_log::close() {
  if (!pool_) return;
  dropped_at_close_ = pool_->overrun_counter();
  logger_->flush();
  // The pool's thread writes everything queued before it ends.
  pool_.reset();
}

void run_log::file_only(spdlog::level::level_enum level, std::string_view text) {
  if (!file_ || pool_) return;  // no file, or spdlog's thread may still be writing to it
  file_->log(spdlog::details::log_msg(logger_->name(), level, text));
  file_->flush();
}

std::string log_path_for(const std::string& report_path) {
  std::filesystem::path p(report_path);
  p.replace_extension(".log");
  return p.string();
}

}  // namespace apiary::harness
