#include "apiary/core/base/thread_name.hpp"

#include <pthread.h>

#include <algorithm>

namespace apiary::core {

namespace {

void set_name(pthread_t thread, std::string_view name) noexcept {
  // The kernel's limit: 16 bytes with the terminating zero.
  char text[16] = {};
  const std::size_t n = std::min(name.size(), sizeof text - 1);
  std::copy_n(name.data(), n, text);
  (void)pthread_setname_np(thread, text);
}

}  // namespace

void name_this_thread(std::string_view name) noexcept { set_name(pthread_self(), name); }

void name_thread(std::thread& t, std::string_view name) noexcept { set_name(t.native_handle(), name); }

}  // namespace apiary::core
