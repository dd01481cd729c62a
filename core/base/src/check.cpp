#include "apiary/core/base/check.hpp"

#include <cstdio>
#include <cstdlib>

namespace apiary::core::detail {

void check_failed(const char* expr, const char* file, int line) noexcept {
  std::fprintf(stderr, "apiary: internal error: check failed: %s (%s:%d)\n", expr, file, line);
  std::abort();
}

}  // namespace apiary::core::detail
