// database: the chain state, a set of undo_indexes whose undo sessions open, undo, squash and
// commit together, after chainbase's database. In process memory only.
//
// Sessions nest: a block session, the pending-transactions session above it, and one short
// session per transaction above that, squashed into the pending one on success and undone on
// failure. The session object is one pointer that doubles as the "still open" flag (no
// per-index handles), and must be closed in LIFO order; closing one out of order is a bug and
// aborts. Revisions: each open session has one, consecutive from the bottom of the stack to
// revision() at the top; commit(r) makes the sessions of revisions <= r permanent.
//
// database_options are runtime switches fixed at construction (they exist to be measured):
//   keep_alive    undo/squash/commit recycle undo states instead of freeing them, so a
//                 session start allocates nothing once the stack has been that deep;
//   pool_objects  the indexes' multi_index nodes come from a node_pool, not the global heap;
//   pool_undo     undo states and their containers come from another node_pool.
// All eight combinations behave identically (tests/state prove it on random scripts).
//
// Where the state lives: on the heap, or in a state_region (state_region.hpp), where every
// index's body, the pools and the database's root (the list of the bodies) are allocated,
// so that the region written to a file and opened again holds the database whole. A
// database over a region that already has a root takes up its indexes: add_index() attaches
// the k-th index added to the k-th body recorded, and refuses an index of another type; the
// pools' switches are the region's (a mismatch is refused), keep_alive is free.
//
// Lifetime: close (push, squash, undo or destroy) every session before the database.
// Thread safety: none; one writer thread owns the database.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "apiary/core/base/check.hpp"
#include "apiary/core/state/state_region.hpp"
#include "apiary/core/state/undo_index.hpp"

namespace apiary::core {

struct database_options {
  bool keep_alive = true;
  bool pool_objects = true;
  bool pool_undo = true;
};

namespace detail {
std::size_t next_index_slot() noexcept;
// A small dense number per index type, so get_index is one vector access.
template <class Index>
std::size_t index_slot() noexcept {
  static const std::size_t slot = next_index_slot();
  return slot;
}
}  // namespace detail

class database {
 public:
  // RAII undo session. Destroying it while still open undoes it; push() keeps its changes on
  // the undo stack (to be committed or undone later through the database), squash() merges
  // them into the session below, undo() reverts them now. Each of these closes it.
  class session {
   public:
    // An inactive session, to be assigned one from start_undo_session(). Prefer this over
    // std::optional<session> for a long-lived pending session: GCC 12 warns falsely
    // (-Wmaybe-uninitialized) on the optional's destructor at -O2.
    session() noexcept = default;
    session(session&& other) noexcept : db_(std::exchange(other.db_, nullptr)), revision_(other.revision_) {}
    session& operator=(session&& other) noexcept {
      if (this != &other) {
        if (db_ != nullptr) undo();
        db_ = std::exchange(other.db_, nullptr);
        revision_ = other.revision_;
      }
      return *this;
    }
    session(const session&) = delete;
    session& operator=(const session&) = delete;
    ~session() {
      if (db_ != nullptr) undo();
    }

    // squash() and undo() need an open session that is the top one (bugs otherwise). If the
    // session was committed meanwhile, its changes are permanent and undo() leaves them.
    void push() noexcept { db_ = nullptr; }
    void squash();  // strong (see database::squash); on failure the session stays open
    void undo() noexcept;
    bool active() const noexcept { return db_ != nullptr; }
    std::int64_t revision() const noexcept { return revision_; }

   private:
    friend class database;
    session(database& db, std::int64_t revision) noexcept : db_(&db), revision_(revision) {}
    database& close() noexcept;  // checks this is the top session and clears the flag

    database* db_ = nullptr;  // the one flag: null once pushed, squashed or undone
    std::int64_t revision_ = 0;
  };

  // region: null for a heap database; else the region it lives in, which outlives it: a new
  // database, or the one the region holds (its switches pool_objects and pool_undo must be
  // options', else state_region_error).
  explicit database(const database_options& options = {}, state_region* region = nullptr);
  ~database();
  database(const database&) = delete;
  database& operator=(const database&) = delete;

  // Creates the index (an undo_index<...>) with this database's memory and keep_alive policy.
  // Each index type once, and only while no session is open (bugs otherwise). strong.
  template <class Index>
  Index& add_index() {
    static_assert(std::is_base_of_v<undo_index_base, Index>);
    APIARY_CHECK(depth_ == 0);
    const std::size_t slot = detail::index_slot<Index>();
    APIARY_CHECK(slot >= by_slot_.size() || by_slot_[slot] == nullptr);
    std::unique_ptr<Index> index = make_index<Index>();
    Index& ref = *index;
    if (slot >= by_slot_.size()) by_slot_.resize(slot + 1, nullptr);
    indexes_.push_back(std::move(index));
    by_slot_[slot] = &ref;
    return ref;
  }
  template <class Index>
  bool has_index() const noexcept {
    const std::size_t slot = detail::index_slot<Index>();
    return slot < by_slot_.size() && by_slot_[slot] != nullptr;
  }
  // The index must have been added (a bug otherwise).
  template <class Index>
  Index& get_index() noexcept {
    APIARY_CHECK(has_index<Index>());
    return *static_cast<Index*>(by_slot_[detail::index_slot<Index>()]);
  }
  template <class Index>
  const Index& get_index() const noexcept {
    APIARY_CHECK(has_index<Index>());
    return *static_cast<const Index*>(by_slot_[detail::index_slot<Index>()]);
  }
  std::size_t index_count() const noexcept { return indexes_.size(); }

  // Opens a session in every index; revision() goes up by one. strong: if an index cannot
  // allocate its undo state, the indexes already started are rolled back. With keep_alive
  // and a stack that has been this deep before, it allocates nothing.
  [[nodiscard]] session start_undo_session();
  // Undoes the top session in every index (no-op when none is open); revision() goes down.
  void undo() noexcept;
  // Merges the top session into the one below (or makes it permanent if it is the only one).
  // strong: every index reserves room first; the merge itself cannot fail.
  void squash();
  // Makes the sessions of revisions <= revision permanent.
  void commit(std::int64_t revision) noexcept;
  void undo_all() noexcept;

  std::int64_t revision() const noexcept { return revision_; }
  // Only with no session open (a bug otherwise).
  void set_revision(std::int64_t revision);
  std::size_t undo_depth() const noexcept { return depth_; }
  const database_options& options() const noexcept { return options_; }
  // Chunks the object and undo pools took from the heap (0 for a pool that is off).
  std::size_t object_pool_bytes() const noexcept;
  std::size_t undo_pool_bytes() const noexcept;

 private:
  template <class Index>
  std::unique_ptr<Index> make_index() {
    if constexpr (requires(const Index& i) { i.body_address(); }) {
      if (root_ != nullptr && attached_ < recorded_bodies()) {
        auto index = std::make_unique<Index>(attach_body, take_body(index_type_id<Index>()), index_options_);
        if (attached_ == 1) revision_ = index->revision();
        APIARY_CHECK(index->revision() == revision_);
        return index;
      }
    } else {
      APIARY_CHECK(root_ == nullptr);  // only an undo_index has a body to keep in a state region
    }
    auto index = std::make_unique<Index>(index_options_);
    index->set_revision(revision_);
    if constexpr (requires(const Index& i) { i.body_address(); }) {
      if (root_ != nullptr) record_body(index->body_address(), index_type_id<Index>());
    }
    return index;
  }

  struct root;
  // A name for an index type that two builds of the same code agree on.
  template <class Index>
  static std::size_t index_type_id() noexcept {
    return std::hash<std::string_view>{}(typeid(Index).name());
  }
  std::size_t recorded_bodies() const noexcept;
  void* take_body(std::size_t type_id);
  void record_body(void* body, std::size_t type_id);

  database_options options_;
  root* root_ = nullptr;  // in the region; null for a heap database
  std::size_t attached_ = 0;
  // Declared before the indexes, which allocate from them, so they are destroyed after.
  std::unique_ptr<std::pmr::memory_resource> object_pool_;
  std::unique_ptr<std::pmr::memory_resource> undo_pool_;
  index_options index_options_;
  std::vector<std::unique_ptr<undo_index_base>> indexes_;  // in registration order
  std::vector<undo_index_base*> by_slot_;
  std::int64_t revision_ = 0;
  std::size_t depth_ = 0;
};

}  // namespace apiary::core
