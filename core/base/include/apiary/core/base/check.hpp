// APIARY_CHECK: a broken invariant is a bug, so it aborts loudly with file:line instead of
// being reported as a value. Expected rejections never use it.
#pragma once

namespace apiary::core::detail {
[[noreturn]] void check_failed(const char* expr, const char* file, int line) noexcept;
}  // namespace apiary::core::detail

#define APIARY_CHECK(cond)                                             \
  do {                                                                 \
    if (!(cond)) [[unlikely]]                                          \
      ::apiary::core::detail::check_failed(#cond, __FILE__, __LINE__); \
  } while (false)
