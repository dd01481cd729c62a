// node_pool: a std::pmr::memory_resource for containers that allocate many small blocks of a
// few fixed sizes (multi_index nodes, undo states, small undo containers). Blocks up to
// max_pooled bytes are carved from 64 KiB chunks and, once freed, kept on a free list per
// 16-byte size class for the next allocation of that class: allocating and freeing is a few
// instructions, against a general-purpose allocator's size lookup and bookkeeping. Larger or
// over-aligned requests go to the upstream resource. Memory returns upstream only when the
// pool is destroyed, so the pool's footprint is its high-water mark. Everything the pool
// keeps (its chunk list too) comes from upstream, so a pool placed in a mapped state
// (state_region.hpp) holds nothing outside it.
//
// Thread safety: none (like std::pmr::unsynchronized_pool_resource); one owner thread.
#pragma once

#include <array>
#include <cstddef>
#include <memory_resource>
#include <new>
#include <vector>

namespace apiary::core {

class node_pool final : public std::pmr::memory_resource {
 public:
  static constexpr std::size_t granule = 16;
  static constexpr std::size_t max_pooled = 512;
  static constexpr std::size_t chunk_bytes = 64 * 1024;

  explicit node_pool(std::pmr::memory_resource* upstream = std::pmr::new_delete_resource())
      : upstream_(upstream), chunks_(upstream) {}
  ~node_pool() override;
  node_pool(const node_pool&) = delete;
  node_pool& operator=(const node_pool&) = delete;

  // A pool found in a state mapped by another process: its bytes are all valid here but its
  // virtual table pointer is that process's. Gives it this program's, keeping everything
  // else (state_region.hpp says why the addresses hold).
  static void reattach(node_pool* pool) noexcept;

  // Bytes obtained from upstream for chunks (not counting the large requests passed through).
  std::size_t chunk_footprint() const { return chunks_.size() * chunk_bytes; }

 private:
  struct free_block {
    free_block* next;
  };
  static constexpr std::size_t classes = max_pooled / granule;
  static constexpr std::size_t class_of(std::size_t bytes) { return bytes == 0 ? 0 : (bytes - 1) / granule; }

  void* do_allocate(std::size_t bytes, std::size_t align) override {
    if (bytes > max_pooled || align > granule) [[unlikely]]
      return upstream_->allocate(bytes, align);
    const std::size_t c = class_of(bytes);
    if (free_block* b = free_[c]) {
      free_[c] = b->next;
      return b;
    }
    return carve((c + 1) * granule);
  }

  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    if (bytes > max_pooled || align > granule) [[unlikely]] {
      upstream_->deallocate(p, bytes, align);
      return;
    }
    const std::size_t c = class_of(bytes);
    auto* b = ::new (p) free_block{free_[c]};
    free_[c] = b;
  }

  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  void* carve(std::size_t size);

  std::pmr::memory_resource* upstream_;
  std::array<free_block*, classes> free_{};
  std::byte* next_ = nullptr;  // the unused rest of the newest chunk
  std::byte* end_ = nullptr;
  std::pmr::vector<void*> chunks_;
};

}  // namespace apiary::core
