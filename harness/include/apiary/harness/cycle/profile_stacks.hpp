// profile_stacks: the measured window's stacks as `apiary run --profile` writes them. Input:
// inferno-collapse-perf --tid's folded stacks, one line per distinct stack,
// "<comm>-<pid>/<tid>;<root frame>;...;<leaf frame> <samples>". Each stack's first frame is
// replaced by its thread's name: "main" for the process's own thread, else the name the
// run's threads had (writer, producer-N, log, ...) by their thread id, else perf's name for
// the thread, else "thread-<tid>". Threads of one name are one thread here. Plain values and
// pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace apiary::harness {

// The window's stacks by thread name.
struct window_stacks {
  // "<thread>;<root>;...;<leaf>" -> samples, in byte order (window.folded's lines).
  std::map<std::string, std::uint64_t> stacks;
  std::map<std::string, std::uint64_t> thread_samples;  // thread name -> samples
  std::uint64_t samples = 0;
  std::uint64_t malformed_lines = 0;  // lines that are not "<stack> <count>": left out
};

// The thread name a folded stack's first frame ("<comm>-<pid>/<tid>") stands for.
// `names`: thread id -> the thread's name while the run went; `main_tid`: the process's id.
std::string thread_name_of(std::string_view first_frame, const std::map<int, std::string>& names, int main_tid);

// Reads inferno-collapse-perf --tid's output with each stack's thread named.
window_stacks stacks_by_thread(std::string_view folded, const std::map<int, std::string>& names, int main_tid);

// One function's samples over every thread: `self` where it was the leaf, `total` where it
// was anywhere in the stack (once per stack, however deep it recursed).
struct function_samples {
  std::string name;
  std::uint64_t self = 0;
  std::uint64_t total = 0;
};

// Every function of the stacks (thread frames aside), by self samples, then total, then name.
std::vector<function_samples> functions_by_self(const window_stacks& w);

// window.folded: every stack with its thread frame, one "<stack> <samples>" line each.
std::string folded_text(const window_stacks& w);
// threads/<thread>.folded: that thread's stacks without the thread frame.
std::string thread_folded_text(const window_stacks& w, std::string_view thread);
// top.tsv: a header line and one line per function, shares as fractions of all samples.
std::string top_tsv(const std::vector<function_samples>& functions, std::uint64_t samples);

// A thread name as a file name: '/' and a leading '.' replaced by '_', never empty.
std::string thread_file_name(std::string_view thread);

// A function name for a line of text: each template's arguments as "<…>" (the summary
// prints the top three on one line; top.tsv and the report keep the names whole).
std::string short_function_name(std::string_view name);

}  // namespace apiary::harness
