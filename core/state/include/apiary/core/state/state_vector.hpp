// state_vector and state_string: the variable-length members of chain state objects (a
// comment's permlinks, its beneficiaries), with memory from where the object itself lies.
//
// A state object in a mapped state (state_region.hpp) must hold no pointer outside the
// mapping, or the next process to open the file follows it into nothing. std::string and
// small_vector take their buffers from the process's heap; these take them from the state
// region that holds the object (state_region::of(this): its text pool), or from the heap
// when the object is elsewhere (a heap state, a copy on the stack). Up to InlineN elements
// live in the object itself. A buffer always belongs to where its owner is: a move between
// places copies (an allocation; out of memory there aborts, as undo's rare allocation does,
// since the undo machinery needs moves that cannot fail).
//
// For trivially copyable elements only (names, routes, characters).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory_resource>
#include <string_view>
#include <type_traits>

#include "apiary/core/state/state_region.hpp"

namespace apiary::core {

template <class T, std::size_t InlineN>
class state_vector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>);

 public:
  using value_type = T;
  using size_type = std::size_t;
  using iterator = T*;
  using const_iterator = const T*;

  state_vector() noexcept = default;
  state_vector(std::initializer_list<T> items) { assign(items.begin(), items.end()); }
  state_vector(const state_vector& other) { assign(other.begin(), other.end()); }
  state_vector(state_vector&& other) noexcept { take(other); }
  state_vector& operator=(const state_vector& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  state_vector& operator=(state_vector&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~state_vector() { release(); }

  template <std::input_iterator It>
  void assign(It first, It last) {
    const auto n = static_cast<std::size_t>(std::distance(first, last));
    reserve_exactly(n, false);
    std::copy(first, last, data());
    size_ = static_cast<std::uint32_t>(n);
  }
  void push_back(const T& item) {
    if (size_ == capacity()) reserve_exactly(std::max<std::size_t>(2 * capacity(), InlineN + 1), true);
    data()[size_++] = item;
  }
  // New elements are T{}.
  void resize(std::size_t n) {
    reserve_exactly(n, true);
    for (std::size_t i = size_; i < n; ++i) data()[i] = T{};
    size_ = static_cast<std::uint32_t>(n);
  }
  void clear() noexcept { size_ = 0; }

  T* data() noexcept { return heap_ != nullptr ? heap_ : local_; }
  const T* data() const noexcept { return heap_ != nullptr ? heap_ : local_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::size_t capacity() const noexcept { return heap_ != nullptr ? capacity_ : InlineN; }
  T* begin() noexcept { return data(); }
  T* end() noexcept { return data() + size_; }
  const T* begin() const noexcept { return data(); }
  const T* end() const noexcept { return data() + size_; }
  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  T& back() noexcept { return data()[size_ - 1]; }

  friend bool operator==(const state_vector& a, const state_vector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  // The memory of where this object lies: its state region's, or the heap.
  std::pmr::memory_resource* memory() const noexcept {
    state_region* r = state_region::of(this);
    return r != nullptr ? r->text_memory() : std::pmr::new_delete_resource();
  }

  // Room for exactly n elements (when more than fit now); keep: the elements stay.
  void reserve_exactly(std::size_t n, bool keep) {
    if (n <= capacity()) return;
    std::pmr::memory_resource* m = memory();
    T* fresh = static_cast<T*>(m->allocate(n * sizeof(T), alignof(T)));
    if (keep && size_ > 0) std::memcpy(static_cast<void*>(fresh), data(), size_ * sizeof(T));
    if (!keep) size_ = 0;
    release_buffer(m);
    heap_ = fresh;
    capacity_ = static_cast<std::uint32_t>(n);
  }

  void release_buffer(std::pmr::memory_resource* m) noexcept {
    if (heap_ != nullptr) m->deallocate(heap_, capacity_ * sizeof(T), alignof(T));
    heap_ = nullptr;
    capacity_ = 0;
  }
  void release() noexcept {
    if (heap_ != nullptr) release_buffer(memory());
    size_ = 0;
  }

  // Takes other's elements, leaving it empty; its buffer only when it belongs here too.
  void take(state_vector& other) noexcept {
    if (other.heap_ != nullptr && state_region::of(&other) == state_region::of(this)) {
      heap_ = std::exchange(other.heap_, nullptr);
      capacity_ = std::exchange(other.capacity_, 0);
      size_ = std::exchange(other.size_, 0);
      return;
    }
    assign(other.begin(), other.end());  // noexcept: an allocation failure here aborts
    other.release();
  }

  T* heap_ = nullptr;  // null while the elements fit in local_
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = 0;  // of heap_
  T local_[InlineN]{};
};

// A permlink or any short text of the state: state_vector's memory, std::string_view's
// reading (it converts to one, and compares and hashes as one).
class state_string : public state_vector<char, 16> {
 public:
  state_string() noexcept = default;
  state_string(std::string_view text) { assign(text.begin(), text.end()); }  // NOLINT(google-explicit-constructor)
  state_string& operator=(std::string_view text) {
    assign(text.begin(), text.end());
    return *this;
  }
  std::string_view view() const noexcept { return {data(), size()}; }
  operator std::string_view() const noexcept { return view(); }  // NOLINT(google-explicit-constructor)

  friend bool operator==(const state_string& a, const state_string& b) noexcept { return a.view() == b.view(); }
  friend bool operator==(const state_string& a, std::string_view b) noexcept { return a.view() == b; }
  friend auto operator<=>(const state_string& a, const state_string& b) noexcept { return a.view() <=> b.view(); }
  friend auto operator<=>(const state_string& a, std::string_view b) noexcept { return a.view() <=> b; }
};

}  // namespace apiary::core
