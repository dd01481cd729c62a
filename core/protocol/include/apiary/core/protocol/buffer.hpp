// out_buffer: one growing byte buffer that binary packing and JSON writing append to.
// Unlike std::string it never zero-fills what it is about to overwrite, and callers reserve
// once and then write through raw pointers. Not thread-safe; movable, not copyable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>

namespace apiary::core {

class out_buffer {
 public:
  out_buffer() = default;
  explicit out_buffer(std::size_t capacity) { reserve(capacity); }
  out_buffer(out_buffer&&) noexcept = default;
  out_buffer& operator=(out_buffer&&) noexcept = default;

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return cap_; }
  bool empty() const { return size_ == 0; }
  const char* data() const { return data_.get(); }
  char* data() { return data_.get(); }
  const std::uint8_t* bytes() const { return reinterpret_cast<const std::uint8_t*>(data_.get()); }
  std::string_view view() const { return {data_.get(), size_}; }
  std::span<const std::uint8_t> span() const { return {bytes(), size_}; }
  void clear() { size_ = 0; }

  void reserve(std::size_t n) {
    if (n > cap_) grow_to(n);
  }
  // Makes room for n more bytes and returns where they go; commit(n) afterwards.
  char* prepare(std::size_t n) {
    if (cap_ - size_ < n) [[unlikely]]
      grow_to(size_ + n);
    return data_.get() + size_;
  }
  void commit(std::size_t n) { size_ += n; }

  void put(char c) {
    if (size_ == cap_) [[unlikely]]
      grow_to(size_ + 1);
    data_[size_++] = c;
  }
  void append(const void* p, std::size_t n) {
    std::memcpy(prepare(n), p, n);
    size_ += n;
  }
  void append(std::string_view s) { append(s.data(), s.size()); }

 private:
  void grow_to(std::size_t need);

  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0;
  std::size_t cap_ = 0;
};

// A per-thread buffer for packing a transaction before hashing it, emptied on each call, so
// the hot paths do not allocate. Valid until the same thread calls it again.
out_buffer& thread_scratch();

}  // namespace apiary::core
