#include "apiary/core/protocol/buffer.hpp"

#include <algorithm>

namespace apiary::core {

void out_buffer::grow_to(std::size_t need) {
  std::size_t cap = std::max<std::size_t>({need, cap_ * 2, 256});
  auto bigger = std::make_unique_for_overwrite<char[]>(cap);
  if (size_ != 0) std::memcpy(bigger.get(), data_.get(), size_);
  data_ = std::move(bigger);
  cap_ = cap;
}

out_buffer& thread_scratch() {
  thread_local out_buffer buf(4096);
  buf.clear();
  return buf;
}

}  // namespace apiary::core
