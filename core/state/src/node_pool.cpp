#include "apiary/core/state/node_pool.hpp"

#include "apiary/core/state/reattach.hpp"

namespace apiary::core {

node_pool::~node_pool() {
  for (void* chunk : chunks_) upstream_->deallocate(chunk, chunk_bytes, granule);
}

void node_pool::reattach(node_pool* pool) noexcept { reattach_vtable(pool, std::pmr::null_memory_resource()); }

void* node_pool::carve(std::size_t size) {
  if (static_cast<std::size_t>(end_ - next_) < size) {
    // The rest of the old chunk (under max_pooled bytes) is left unused.
    chunks_.reserve(chunks_.size() + 1);  // so that push_back cannot throw after allocating
    void* chunk = upstream_->allocate(chunk_bytes, granule);
    chunks_.push_back(chunk);
    next_ = static_cast<std::byte*>(chunk);
    end_ = next_ + chunk_bytes;
  }
  void* p = next_;
  next_ += size;
  return p;
}

}  // namespace apiary::core
