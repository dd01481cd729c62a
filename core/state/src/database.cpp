#include "apiary/core/state/database.hpp"

#include <atomic>

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

database::database(const database_options& options)
    : options_(options),
      object_pool_(make_pool(options.pool_objects)),
      undo_pool_(make_pool(options.pool_undo)),
      index_options_{object_pool_ ? object_pool_.get() : std::pmr::new_delete_resource(),
                     undo_pool_ ? undo_pool_.get() : std::pmr::new_delete_resource(), options.keep_alive} {}

database::~database() = default;

std::size_t database::object_pool_bytes() const noexcept {
  return object_pool_ ? static_cast<const node_pool&>(*object_pool_).chunk_footprint() : 0;
}
std::size_t database::undo_pool_bytes() const noexcept {
  return undo_pool_ ? static_cast<const node_pool&>(*undo_pool_).chunk_footprint() : 0;
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
