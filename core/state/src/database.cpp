#include "apiary/core/state/database.hpp"

#include <array>
#include <atomic>
#include <string>

#include "apiary/core/state/node_pool.hpp"

namespace apiary::core {

namespace detail {
std::size_t next_index_slot() noexcept {
  static std::atomic<std::size_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace detail

namespace {
std::unique_ptr<std::pmr::memory_resource> make_pool(bool on) {
  if (!on) return nullptr;
  return std::make_unique<node_pool>();
}
}  // namespace

// The database's part of a state region: its pools and, in the order they were added, its
// indexes' bodies with the type each was made for.
struct database::root {
  static constexpr std::uint64_t expected_magic = 0x31544f4f52424441;  // "ADBROOT1"
  static constexpr std::size_t max_indexes = 32;

  root(const database_options& options, std::pmr::memory_resource* memory)
      : object_pool(memory), undo_pool(memory), pool_objects(options.pool_objects), pool_undo(options.pool_undo) {}

  std::uint64_t magic = expected_magic;
  node_pool object_pool;
  node_pool undo_pool;
  bool pool_objects;
  bool pool_undo;
  std::size_t count = 0;
  std::array<void*, max_indexes> bodies{};
  std::array<std::size_t, max_indexes> types{};
};

namespace {
std::string on_off(bool on) { return on ? "on" : "off"; }
}  // namespace

database::database(const database_options& options, state_region* region) : options_(options) {
  if (region == nullptr) {
    object_pool_ = make_pool(options.pool_objects);
    undo_pool_ = make_pool(options.pool_undo);
    index_options_ = {.objects = object_pool_ ? object_pool_.get() : std::pmr::new_delete_resource(),
                      .undo = undo_pool_ ? undo_pool_.get() : std::pmr::new_delete_resource(),
                      .keep_alive = options.keep_alive};
    return;
  }
  std::pmr::memory_resource* memory = region->memory();
  root_ = static_cast<root*>(region->root());
  if (root_ == nullptr) {
    root_ = ::new (memory->allocate(sizeof(root), alignof(root))) root(options, memory);
    region->set_root(root_);
  } else {
    if (root_->magic != root::expected_magic) throw state_region_error("the state holds no database");
    if (root_->pool_objects != options.pool_objects || root_->pool_undo != options.pool_undo)
      throw state_region_error("the state was made with pool_objects " + on_off(root_->pool_objects) +
                               " and pool_undo " + on_off(root_->pool_undo) + ", not " + on_off(options.pool_objects) +
                               " and " + on_off(options.pool_undo));
    node_pool::reattach(&root_->object_pool);
    node_pool::reattach(&root_->undo_pool);
  }
  index_options_ = {.objects = options.pool_objects ? &root_->object_pool : memory,
                    .undo = options.pool_undo ? &root_->undo_pool : memory,
                    .keep_alive = options.keep_alive,
                    .home = memory,
                    .left_in_place = true};
}

database::~database() = default;

std::size_t database::recorded_bodies() const noexcept { return root_->count; }

void* database::take_body(std::size_t type_id) {
  if (root_->types[attached_] != type_id)
    throw state_region_error("the state's index " + std::to_string(attached_) +
                             " is of another type than this build's");
  return root_->bodies[attached_++];
}

void database::record_body(void* body, std::size_t type_id) {
  APIARY_CHECK(root_->count < root::max_indexes);
  root_->bodies[root_->count] = body;
  root_->types[root_->count] = type_id;
  ++root_->count;
  attached_ = root_->count;
}

namespace {
const node_pool* pool_of(const std::unique_ptr<std::pmr::memory_resource>& heap, const node_pool* mapped, bool on) {
  if (!on) return nullptr;
  return heap ? static_cast<const node_pool*>(heap.get()) : mapped;
}
}  // namespace

std::size_t database::object_pool_bytes() const noexcept {
  const node_pool* p = pool_of(object_pool_, root_ ? &root_->object_pool : nullptr, options_.pool_objects);
  return p ? p->chunk_footprint() : 0;
}
std::size_t database::undo_pool_bytes() const noexcept {
  const node_pool* p = pool_of(undo_pool_, root_ ? &root_->undo_pool : nullptr, options_.pool_undo);
  return p ? p->chunk_footprint() : 0;
}

database::session database::start_undo_session() {
  std::size_t started = 0;
  try {
    for (; started < indexes_.size(); ++started) indexes_[started]->start_undo_session();
  } catch (...) {
    while (started > 0) indexes_[--started]->undo();
    throw;
  }
  ++depth_;
  return session(*this, ++revision_);
}

void database::undo() noexcept {
  if (depth_ == 0) return;
  for (auto& index : indexes_) index->undo();
  --depth_;
  --revision_;
}

void database::squash() {
  if (depth_ == 0) return;
  for (auto& index : indexes_) index->reserve_for_squash();
  for (auto& index : indexes_) index->squash_reserved();
  if (depth_ == 1) {
    depth_ = 0;  // squashed into the permanent state; the revision stays
  } else {
    --depth_;
    --revision_;
  }
}

void database::commit(std::int64_t revision) noexcept {
  for (auto& index : indexes_) index->commit(revision);
  const std::int64_t bottom = revision_ - static_cast<std::int64_t>(depth_) + 1;
  if (revision >= bottom) depth_ = revision >= revision_ ? 0 : static_cast<std::size_t>(revision_ - revision);
}

void database::undo_all() noexcept {
  while (depth_ > 0) undo();
}

void database::set_revision(std::int64_t revision) {
  APIARY_CHECK(depth_ == 0);
  for (auto& index : indexes_) index->set_revision(revision);
  revision_ = revision;
}

database& database::session::close() noexcept {
  APIARY_CHECK(db_ != nullptr);               // already pushed, squashed or undone
  APIARY_CHECK(db_->revision_ == revision_);  // a session above it is still open
  return *std::exchange(db_, nullptr);
}

void database::session::squash() {
  APIARY_CHECK(db_ != nullptr && db_->revision_ == revision_);
  db_->squash();  // if it throws, the session stays open and is undone on destruction
  db_ = nullptr;
}

void database::session::undo() noexcept { close().undo(); }

}  // namespace apiary::core
