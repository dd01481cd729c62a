#include "apiary/harness/cycle/profile_stacks.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>
#include <set>

#include <spdlog/fmt/fmt.h>

namespace apiary::harness {

namespace {

std::optional<std::uint64_t> whole_number(std::string_view s) {
  std::uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string thread_name_of(std::string_view first_frame, const std::map<int, std::string>& names, int main_tid) {
  // "<comm>-<pid>/<tid>": the comm may hold '-' and '/' too, the numbers never do.
  const std::size_t slash = first_frame.rfind('/');
  const std::size_t dash = slash == std::string_view::npos ? slash : first_frame.rfind('-', slash);
  const auto tid = slash == std::string_view::npos ? std::nullopt : whole_number(first_frame.substr(slash + 1));
  if (!tid || dash == std::string_view::npos) return std::string(first_frame);
  if (*tid == static_cast<std::uint64_t>(main_tid)) return "main";
  if (auto it = names.find(static_cast<int>(*tid)); it != names.end() && !it->second.empty()) return it->second;
  // perf names a thread it saw start while it was not recording ":<tid>".
  const std::string_view comm = first_frame.substr(0, dash);
  if (!comm.empty() && comm.front() != ':') return std::string(comm);
  return "thread-" + std::to_string(*tid);
}

window_stacks stacks_by_thread(std::string_view folded, const std::map<int, std::string>& names, int main_tid) {
  window_stacks w;
  std::map<std::string, std::string, std::less<>> named;  // first frame -> thread name
  while (!folded.empty()) {
    const std::size_t end = std::min(folded.find('\n'), folded.size());
    std::string_view line = folded.substr(0, end);
    folded.remove_prefix(std::min(end + 1, folded.size()));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    // The count follows the last space: frames may hold spaces ("std::tuple<int const&>").
    const std::size_t space = line.rfind(' ');
    // A plain count and a flag, not an optional merged from a conditional expression: GCC
    // (-O2 with TSan) takes such an optional's value for one that may be uninitialized.
    std::uint64_t count = 0;
    bool counted = false;
    if (space != std::string_view::npos) {
      if (const std::optional<std::uint64_t> parsed = whole_number(line.substr(space + 1))) {
        count = *parsed;
        counted = true;
      }
    }
    const std::string_view stack = space == std::string_view::npos ? line : line.substr(0, space);
    const std::size_t semicolon = stack.find(';');
    if (!counted || semicolon == std::string_view::npos || semicolon == 0) {
      ++w.malformed_lines;
      continue;
    }
    const std::string_view first = stack.substr(0, semicolon);
    auto it = named.find(first);
    if (it == named.end()) it = named.emplace(std::string(first), thread_name_of(first, names, main_tid)).first;
    std::string key = it->second;
    key.append(stack.substr(semicolon));
    w.stacks[key] += count;
    w.thread_samples[it->second] += count;
    w.samples += count;
  }
  return w;
}

std::vector<function_samples> functions_by_self(const window_stacks& w) {
  std::map<std::string_view, function_samples> by_name;
  std::set<std::string_view> seen;
  for (const auto& [stack, count] : w.stacks) {
    seen.clear();
    std::string_view rest = std::string_view(stack).substr(stack.find(';') + 1);  // the thread frame aside
    while (true) {
      const std::size_t semicolon = rest.find(';');
      const std::string_view frame = rest.substr(0, semicolon);
      function_samples& f = by_name[frame];
      if (seen.insert(frame).second) f.total += count;
      if (semicolon == std::string_view::npos) {
        f.self += count;
        break;
      }
      rest.remove_prefix(semicolon + 1);
    }
  }
  std::vector<function_samples> out;
  out.reserve(by_name.size());
  for (auto& [name, f] : by_name) {
    f.name = std::string(name);
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const function_samples& a, const function_samples& b) {
    if (a.self != b.self) return a.self > b.self;
    if (a.total != b.total) return a.total > b.total;
    return a.name < b.name;
  });
  return out;
}

std::string folded_text(const window_stacks& w) {
  std::string out;
  for (const auto& [stack, count] : w.stacks) fmt::format_to(std::back_inserter(out), "{} {}\n", stack, count);
  return out;
}

std::string thread_folded_text(const window_stacks& w, std::string_view thread) {
  std::string out;
  const std::string prefix = std::string(thread) + ";";
  for (auto it = w.stacks.lower_bound(prefix); it != w.stacks.end() && it->first.starts_with(prefix); ++it)
    fmt::format_to(std::back_inserter(out), "{} {}\n", std::string_view(it->first).substr(prefix.size()), it->second);
  return out;
}

std::string top_tsv(const std::vector<function_samples>& functions, std::uint64_t samples) {
  std::string out = "function\tself_share\ttotal_share\tself_samples\ttotal_samples\n";
  const double all = samples == 0 ? 1.0 : static_cast<double>(samples);
  for (const function_samples& f : functions)
    fmt::format_to(std::back_inserter(out), "{}\t{:.6f}\t{:.6f}\t{}\t{}\n", f.name, static_cast<double>(f.self) / all,
                   static_cast<double>(f.total) / all, f.self, f.total);
  return out;
}

std::string thread_file_name(std::string_view thread) {
  std::string out(thread.empty() ? std::string_view("thread") : thread);
  std::replace(out.begin(), out.end(), '/', '_');
  if (out.front() == '.') out.front() = '_';
  return out;
}

std::string short_function_name(std::string_view name) {
  std::string out;
  int depth = 0;
  for (char ch : name) {
    // operator<, operator<< and operator<=> are names, not template arguments.
    if (ch == '<' && depth == 0 && (out.ends_with("operator") || out.ends_with("operator<"))) {
      out += ch;
      continue;
    }
    if (ch == '<') {
      if (depth++ == 0) out += "<…>";
      continue;
    }
    if (ch == '>' && depth > 0) {
      --depth;
      continue;
    }
    if (depth == 0) out += ch;
  }
  return out;
}

}  // namespace apiary::harness
