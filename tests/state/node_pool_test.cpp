// node_pool: freed blocks are reused by size class; large or over-aligned requests and the
// chunks themselves come from upstream, and everything returns there on destruction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "apiary/core/state/node_pool.hpp"
#include "state_test_objects.hpp"

namespace apiary::core::test {
namespace {

TEST(NodePool, ReusesFreedBlocksOfTheSameClass) {
  node_pool pool;
  void* a = pool.allocate(100, 8);
  void* b = pool.allocate(100, 8);
  EXPECT_NE(a, b);
  pool.deallocate(a, 100, 8);
  EXPECT_EQ(pool.allocate(112, 16), a);  // 100 and 112 bytes share the 112-byte class
  void* c = pool.allocate(120, 8);       // another class: not the freed block
  EXPECT_NE(c, a);
  pool.deallocate(b, 100, 8);
  pool.deallocate(c, 120, 8);
}

TEST(NodePool, BlocksAreAlignedAndDisjoint) {
  node_pool pool;
  std::vector<std::pair<std::uintptr_t, std::size_t>> blocks;
  for (std::size_t i = 0; i < 5000; ++i) {
    const std::size_t size = 1 + (i * 37) % node_pool::max_pooled;
    void* p = pool.allocate(size, alignof(std::max_align_t));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % node_pool::granule, 0u);
    std::memset(p, 0xab, size);
    blocks.emplace_back(reinterpret_cast<std::uintptr_t>(p), size);
  }
  std::sort(blocks.begin(), blocks.end());
  for (std::size_t i = 1; i < blocks.size(); ++i)
    EXPECT_LE(blocks[i - 1].first + blocks[i - 1].second, blocks[i].first);
  for (const auto& [p, size] : blocks) pool.deallocate(reinterpret_cast<void*>(p), size, alignof(std::max_align_t));
}

TEST(NodePool, LargeRequestsAndChunksComeFromUpstream) {
  counting_resource upstream;
  {
    node_pool pool(&upstream);
    void* small = pool.allocate(64, 8);
    EXPECT_EQ(upstream.allocations, 2u);  // the first chunk, and the list of chunks
    void* large = pool.allocate(node_pool::max_pooled + 1, 8);
    EXPECT_EQ(upstream.allocations, 3u);
    pool.deallocate(large, node_pool::max_pooled + 1, 8);
    EXPECT_EQ(upstream.live, 2u);
    void* aligned = pool.allocate(64, 64);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % 64, 0u);
    pool.deallocate(aligned, 64, 64);
    pool.deallocate(small, 64, 8);
    for (int i = 0; i < 2000; ++i) (void)pool.allocate(64, 8);                        // 128 KB: more chunks
    EXPECT_EQ(pool.chunk_footprint(), (upstream.live - 1) * node_pool::chunk_bytes);  // all but the list
    EXPECT_GT(upstream.live, 2u);
  }
  EXPECT_EQ(upstream.live, 0u);
}

}  // namespace
}  // namespace apiary::core::test
