// state_region: memory for a whole chain state at one fixed address, made anew or opened from
// a state file, as LMDB's MDB_FIXEDMAP keeps a database: every pointer the state holds (the
// containers' links, the undo stacks, the pools' free lists) is valid as written, because the
// state always lies at the address it was made at. Nothing is rebuilt on opening: the file is
// mapped, and the state is there.
//
// Layout. The region reserves `reserve` bytes of address space at base_address() and runs a
// Boost.Interprocess managed segment (rbtree_best_fit, no locks: one writer thread) over it,
// the "arena". The arena's first block holds the region's core: the arena's memory resource,
// a node_pool for the state's short strings (state_string.hpp) and the root, a pointer the
// owner sets (database.hpp records its indexes there).
//
// A state file is a 4096-byte header and then the used part of the segment, byte for byte:
//   magic "APIARYMS", format version, header size, base address, reserve, segment bytes,
//   the core's offset, the owner's payload (layout id, options, head: opaque here), a digest
//   (XXH3-128) of the segment's bytes, one of the allocator's bookkeeping (the segment
//   manager's header and the core) and one of the header itself.
// open() checks the header and the bookkeeping digest (a few KiB), maps the segment
// copy-on-write (MAP_PRIVATE) at its base address, and anonymous memory after it up to the
// reserve, for what the run adds. A run never writes the file; the content digest is checked
// only when asked (verify_content: it reads every byte). write() writes a new file under a
// temporary name and renames it into place.
//
// Objects with virtual functions in the region (memory resources) are reattached on opening
// (reattach.hpp); the region's own are. An owner that keeps its own must reattach them.
//
// One region may be open at a time per base address, so per process; state_region::of finds
// the region holding an address (state_string asks it where to allocate).
//
// Thread safety: the arena has no locks; one thread allocates from it at a time.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <memory_resource>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace apiary::core {

// A state file that cannot be opened or written, or an address range that is taken: one line
// naming the file and what is wrong.
class state_region_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class state_region {
 public:
  static constexpr std::size_t default_reserve = std::size_t{64} << 30;
  static constexpr std::size_t header_bytes = 4096;
  static constexpr std::size_t max_payload_bytes = 3072;

  // Where this build maps states: an address no sanitizer's shadow memory and no usual
  // mapping uses (ThreadSanitizer allows application memory only below 512 GiB).
  static std::uintptr_t base_address() noexcept;

  // A new, empty state.
  static std::unique_ptr<state_region> make(std::size_t reserve = default_reserve);

  struct open_options {
    bool prefault = true;  // read every page in now (MAP_POPULATE) rather than on first use
  };
  // The state a file holds, mapped copy-on-write. Throws state_region_error naming the file:
  // not a state file, another format version, a header or bookkeeping digest that does not
  // match, a file shorter than its header says, a base address taken.
  static std::unique_ptr<state_region> open(const std::filesystem::path& file, const open_options& options);

  ~state_region();
  state_region(const state_region&) = delete;
  state_region& operator=(const state_region&) = delete;

  // All of the state's memory; and blocks for short strings.
  std::pmr::memory_resource* memory() noexcept;
  std::pmr::memory_resource* text_memory() noexcept;
  // The owner's root object (null in a new region); set once, before write().
  void* root() const noexcept;
  void set_root(void* root) noexcept;
  // The payload the file's header carried (empty for a new region).
  std::span<const std::byte> payload() const noexcept { return payload_; }

  // Writes the state to `file` (a temporary name beside it, renamed into place): the header
  // with `payload` (at most max_payload_bytes) and the used part of the arena. Throws
  // state_region_error when the file cannot be written; nothing is left under its name then.
  void write(const std::filesystem::path& file, std::span<const std::byte> payload) const;
  // Reads every byte of the segment as the file holds it and compares its digest; the
  // problem in one line, or empty. Only on a region opened from a file, before it changed.
  std::string verify_content() const;

  bool contains(const void* p) const noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    return a >= base_ && a < base_ + reserve_;
  }
  // The open region holding p, or null.
  static state_region* of(const void* p) noexcept;

  // What opening cost, for the report.
  struct open_stats {
    std::chrono::nanoseconds map_time{};       // header check and mmap
    std::chrono::nanoseconds prefault_time{};  // faulting the pages in (0 without prefault)
    std::size_t file_bytes = 0;                // the segment as mapped from the file
  };
  const open_stats& opened() const noexcept { return opened_; }
  // Bytes of the arena in use now (its size less its free memory).
  std::size_t used_bytes() const noexcept;

 private:
  struct core;
  struct segment;
  state_region(std::uintptr_t base, std::size_t reserve);
  void map_anonymous(std::size_t from);
  core& the_core() const noexcept;

  std::uintptr_t base_;
  std::byte* start_;  // base_ as a pointer
  std::size_t reserve_;
  bool mapped_ = false;  // the address range is this region's (and unmapped with it)
  std::unique_ptr<segment> segment_;
  std::size_t core_offset_ = 0;
  std::filesystem::path file_;  // the file it was opened from (for verify_content)
  std::size_t file_segment_bytes_ = 0;
  std::vector<std::byte> payload_;
  std::array<std::byte, 16> content_digest_{};
  open_stats opened_;
};

}  // namespace apiary::core
