// undo_index: one table of chain state (a boost::multi_index_container) whose changes can be
// rolled back in nested undo sessions, after chainbase's generic_index.
//
// Object requirements: default-constructible, copy-constructible, nothrow move-constructible
// and nothrow move-assignable, with a public unsigned integer member `id`. The first index of
// IndexedBy must be ordered_unique or hashed_unique on `id`; the index assigns ids itself,
// from next_id() upwards.
//
// The undo stack holds one undo state per open session (bottom = oldest). A state records, for
// everything that happened while it was on top:
//   new_ids     ids created in it (ascending, because ids only grow while a state is on top);
//   old_values  the value of each pre-existing object before its first modification;
//   removed     pre-existing objects removed in it, holding their value at session start;
//   old_next_id next_id() when the session started.
// Within one session the operations on a key follow  CREATE MODIFY* REMOVE?  (a key created
// in it) or  MODIFY* REMOVE?  (a key that existed before), so the rules are: a modification
// of an object created in the session or already recorded in old_values records nothing;
// removing an object created in the session forgets it (drops its id from new_ids, nothing
// else); removing a modified object moves its recorded old value into `removed`. squash()
// documents how two states merge.
//
// Errors: a lambda's exception propagates and a unique key clash throws unique_key_violation,
// both with nothing changed (the caller's transaction turns them into a rejection); misuse
// that breaks an invariant (changing an id, set_revision with a session open) aborts.
//
// Invariants (checked with APIARY_CHECK where cheap):
//   - an object was created in the top session exactly when its id >= top.old_next_id, so
//     "was it created in this session" costs one comparison instead of a set lookup;
//   - an id sits in at most one of new_ids / old_values / removed of a state;
//   - the states on the stack have the consecutive revisions
//     revision()-undo_depth()+1 .. revision().
//
// undo() restores the top state exactly: the restored objects are the very nodes that were
// there before (a removed object is kept as an extracted node and put back, so references
// taken before the session see it again), and next_id() goes back too.
//
// keep_alive (index_options): when on, undo/squash/commit clear a state's containers and keep
// it for the next session instead of destroying it, so starting a session allocates nothing
// once the stack has been that deep. Observable behaviour is the same either way.
//
// Thread safety: none. One writer thread owns the index; readers must be on that thread too.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <memory_resource>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mpl/size.hpp>
#include <boost/multi_index/detail/bucket_array.hpp>
#include <boost/multi_index_container.hpp>
#include <boost/unordered/unordered_flat_map.hpp>

#include "apiary/core/base/check.hpp"
#include "apiary/core/state/reattach.hpp"

namespace apiary::core {

namespace undo_index_detail {

// The unit the prefetches load (x86-64's and most CPUs' cache line).
inline constexpr std::size_t cache_line = 64;

// A Boost.MultiIndex hashed index keeps its bucket array private, and a prefetch of a bucket
// needs its address. An explicit instantiation may name a private member, so a line
//   template struct undo_index_detail::bind_buckets<I, &I::buckets>;
// in one source file (I: an undo_index's hashed_index_type<Tag>) binds the member at static
// initialization; an index without such a line has no bucket to prefetch (the prefetches do
// nothing).
template <class Index>
using bucket_array_t = boost::multi_index::detail::bucket_array<typename Index::allocator_type>;
template <class Index>
struct hashed_buckets {
  static inline bucket_array_t<Index> Index::*member = nullptr;
};
template <class Index, bucket_array_t<Index> Index::*Member>
struct bind_buckets {
  static inline const bool bound = (hashed_buckets<Index>::member = Member, true);
};

}  // namespace undo_index_detail

// Where an index takes its memory from, and whether it recycles undo states. database builds
// these from database_options; a standalone index defaults to the global heap.
struct index_options {
  std::pmr::memory_resource* objects = std::pmr::new_delete_resource();  // multi_index nodes
  std::pmr::memory_resource* undo = std::pmr::new_delete_resource();     // undo states
  bool keep_alive = false;
  // The index's body (its container, undo stack and counters, undo_index::body_bytes) and
  // whether the body stays where it is when the index is destroyed: a mapped state's bodies
  // go with the mapping (state_region.hpp) and are never torn down object by object.
  std::pmr::memory_resource* home = std::pmr::new_delete_resource();
  bool left_in_place = false;
};

// Tags undo_index's constructor that takes up a body another index left (a mapped state).
struct attach_body_t {
  explicit attach_body_t() = default;
};
inline constexpr attach_body_t attach_body{};

// Forwards to another resource and counts the bytes it holds: each index's share of the
// object pool (its nodes, buckets and the nodes its undo states keep), for the report's state
// section. One add per allocation, on the index's own thread.
class counting_resource final : public std::pmr::memory_resource {
 public:
  explicit counting_resource(std::pmr::memory_resource* upstream) : upstream_(upstream) {}
  std::size_t bytes() const noexcept { return bytes_; }
  std::pmr::memory_resource* upstream() const noexcept { return upstream_; }

 private:
  void* do_allocate(std::size_t bytes, std::size_t align) override {
    void* p = upstream_->allocate(bytes, align);
    bytes_ += bytes;
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    upstream_->deallocate(p, bytes, align);
    bytes_ -= bytes;
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  std::pmr::memory_resource* upstream_;
  std::size_t bytes_ = 0;
};

// A create or modify would give two objects the same key in a unique index. The operation
// did nothing.
class unique_key_violation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// The session interface database drives for every index, whatever its object type.
class undo_index_base {
 public:
  virtual ~undo_index_base() = default;
  undo_index_base(const undo_index_base&) = delete;
  undo_index_base& operator=(const undo_index_base&) = delete;

  virtual void start_undo_session() = 0;  // strong
  virtual void undo() noexcept = 0;       // no-op when no session is open
  // Two phases so that database can squash all its indexes or none: reserve_for_squash may
  // throw (std::bad_alloc) and changes nothing observable; squash_reserved cannot fail.
  virtual void reserve_for_squash() = 0;  // strong
  virtual void squash_reserved() noexcept = 0;
  virtual void commit(std::int64_t revision) noexcept = 0;
  virtual void set_revision(std::int64_t revision) = 0;
  virtual std::int64_t revision() const noexcept = 0;
  virtual std::size_t undo_depth() const noexcept = 0;

 protected:
  undo_index_base() = default;
};

template <class Object, class IndexedBy>
class undo_index final : public undo_index_base {
 public:
  using value_type = Object;
  using id_type = std::remove_cvref_t<decltype(std::declval<Object&>().id)>;
  using allocator_type = std::pmr::polymorphic_allocator<Object>;
  using container_type = boost::multi_index_container<Object, IndexedBy, allocator_type>;

  static_assert(std::unsigned_integral<id_type>, "Object::id must be an unsigned integer");
  static_assert(std::is_default_constructible_v<Object> && std::is_copy_constructible_v<Object>);
  // undo() and the rollback of a failed modify move values back into place and must not fail.
  static_assert(std::is_nothrow_move_constructible_v<Object> && std::is_nothrow_move_assignable_v<Object>,
                "undo needs nothrow moves");
  static_assert(std::is_same_v<typename container_type::key_type, id_type>,
                "the first index must be keyed on Object::id");

 private:
  using node_type = typename container_type::node_type;
  // A node handle names an allocator_type, so a pmr vector would try uses-allocator
  // construction on it; wrapped, it is moved as it is.
  struct removed_node {
    node_type node;
  };
  using old_values_map = boost::unordered_flat_map<id_type, Object, boost::hash<id_type>, std::equal_to<id_type>,
                                                   std::pmr::polymorphic_allocator<std::pair<const id_type, Object>>>;

 public:
  // What one session changed; read-only outside the index (tests and diagnostics).
  class undo_state {
   public:
    std::span<const id_type> new_ids() const { return {new_ids_.data(), new_ids_.size()}; }
    std::size_t modified_count() const { return old_values_.size(); }
    // How many old values the state has room for before it grows (what clearing and squashing
    // it walk).
    std::size_t modified_room() const { return old_values_.bucket_count(); }
    std::size_t removed_count() const { return removed_.size(); }
    // The value before the session's first modification, or null if it recorded none.
    const Object* old_value(id_type id) const {
      auto it = old_values_.find(id);
      return it == old_values_.end() ? nullptr : &it->second;
    }
    // The value at session start of an object removed in the session (linear: diagnostics).
    const Object* removed_value(id_type id) const {
      for (const removed_node& r : removed_)
        if (r.node.value().id == id) return &r.node.value();
      return nullptr;
    }
    id_type old_next_id() const { return old_next_id_; }
    std::int64_t revision() const { return revision_; }
    bool empty() const { return new_ids_.empty() && old_values_.empty() && removed_.empty(); }

   private:
    friend class undo_index;

    explicit undo_state(std::pmr::memory_resource* r)
        : new_ids_(r), old_values_(typename old_values_map::allocator_type(r)), removed_(r) {}

    // Bigger containers are released on clear(), so a state that took in a huge undo does
    // not hold its memory for good. A block's worth (a pending or block session: about
    // 10,000 modified objects in a full block) stays, so the next such session does not
    // grow its map again by rehashing. Transaction sessions stay small: squash never hands a
    // larger container down to the state above (has_more_room).
    static constexpr std::size_t retain_limit = 65536;

    // A map is cleared and walked (squash) in time that grows with its room, not with what it
    // holds. A state that once held a block's worth and is then taken for a transaction's
    // session (the spare states change places as blocks commit) would pay for that room at
    // every transaction: a map holding under an eighth of its room, past a transaction's
    // worth, is released instead of kept.
    static constexpr std::size_t transaction_room = 1024;
    static bool oversized(std::size_t held, std::size_t room) noexcept {
      return room > transaction_room && held < room / 8;
    }

    // Whether any of this state's containers has more room than the other's.
    bool has_more_room(const undo_state& other) const noexcept {
      return new_ids_.capacity() > other.new_ids_.capacity() ||
             old_values_.bucket_count() > other.old_values_.bucket_count() ||
             removed_.capacity() > other.removed_.capacity();
    }

    void clear() noexcept {
      if (empty()) return;  // the common case: an empty transaction session
      if (new_ids_.capacity() > retain_limit) {
        std::pmr::vector<id_type>(new_ids_.get_allocator()).swap(new_ids_);
      } else {
        new_ids_.clear();
      }
      if (old_values_.bucket_count() > retain_limit || oversized(old_values_.size(), old_values_.bucket_count())) {
        old_values_map(old_values_.get_allocator()).swap(old_values_);
      } else if (!old_values_.empty()) {
        old_values_.clear();
      }
      if (removed_.capacity() > retain_limit) {
        std::pmr::vector<removed_node>(removed_.get_allocator()).swap(removed_);
      } else {
        removed_.clear();
      }
    }

    // A map that holds no table points at an empty one that Boost keeps in the program, the
    // program that made the state: give it this program's (attach_body).
    void forget_empty_table() noexcept {
      if (old_values_.bucket_count() == 0) old_values_map(old_values_.get_allocator()).swap(old_values_);
    }

    std::pmr::vector<id_type> new_ids_;
    old_values_map old_values_;
    std::pmr::vector<removed_node> removed_;
    id_type old_next_id_ = 0;
    std::int64_t revision_ = 0;
  };

  explicit undo_index(const index_options& options = {}) : undo_index(make_body(options), options) {}

  // Takes up the body at `address`, which an index of this very type left in a mapped state
  // another process made (state_region.hpp): its objects, ids, revision and spare undo states
  // are this index's. Its memory resources must be those of `options` as they were then (the
  // database checks it); keep_alive is this index's own. No session may be open in it.
  undo_index(attach_body_t /*tag*/, void* address, const index_options& options)
      : undo_index(*static_cast<body*>(address), options) {
    reattach_vtable(&counted_, nullptr);
    APIARY_CHECK(counted_.upstream() == options.objects && undo_resource_ == options.undo && depth_ == 0);
    keep_alive_ = options.keep_alive;
    for (state_ptr& spare : states_) spare->forget_empty_table();
  }

  ~undo_index() override {
    if (left_in_place_) return;
    std::pmr::memory_resource* home = home_;
    body* b = &body_;
    std::destroy_at(b);
    home->deallocate(b, sizeof(body), alignof(body));
  }

  // Where the body is, for a database that records it to take it up later (attach_body), and
  // its size (a state file's layout depends on it).
  void* body_address() const noexcept { return &body_; }
  static constexpr std::size_t body_size() noexcept { return sizeof(body); }

  // --- objects ---------------------------------------------------------------------------

  // Builds a default Object with the next id, lets ctor fill it in, and inserts it.
  // strong: if ctor throws, or a unique key is taken (unique_key_violation), nothing changed
  // and the id is not used up.
  template <class Ctor>
  const Object& create(Ctor&& ctor) {
    Object obj{};
    obj.id = next_id_;
    std::forward<Ctor>(ctor)(obj);
    APIARY_CHECK(obj.id == next_id_);  // ids belong to the index
    if (depth_ > 0) reserve_more(top().new_ids_, 1);
    // next_id_ is above every id held, so the id index takes the object at its end, next to
    // the last one, instead of walking its tree down from the root (a hint only: Boost checks
    // it, and a wrong one costs a search).
    const std::size_t before = container_.size();
    const auto it = container_.emplace_hint(container_.end(), std::move(obj));
    if (container_.size() == before) throw unique_key_violation("undo_index::create: unique key already taken");
    if (depth_ > 0) top().new_ids_.push_back(next_id_);
    ++next_id_;
    return *it;
  }

  // Applies mod to obj, which must be an element of this index, and re-indexes it; mod must
  // not use this index. A modification that changes no key (most: balances, counters) is
  // applied in place and moves nothing: no index compares the object with its neighbours.
  // strong: if mod throws, or the new value takes a unique key already in use
  // (unique_key_violation), obj keeps its value and the undo state is as before.
  template <class Modifier>
  void modify(const Object& obj, Modifier&& mod) {
    const auto it = container_.iterator_to(obj);
    const id_type id = obj.id;
    Object* backup = nullptr;  // the value to put back if mod fails
    std::optional<Object> copy;
    bool recorded_now = false;
    if (depth_ > 0 && id < top().old_next_id_) {
      auto [pos, inserted] = top().old_values_.try_emplace(id, obj);
      if (inserted) {
        backup = &pos->second;  // the old value is also the backup: no second copy
        recorded_now = true;
      }
    }
    if (backup == nullptr) backup = &copy.emplace(obj);

    // The element's value is changed where it is, as multi_index_container::modify does
    // before it re-indexes; with every key as it was, there is nothing to re-index.
    auto& value = const_cast<Object&>(obj);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    try {
      mod(value);
    } catch (...) {
      value = std::move(*backup);
      if (recorded_now) top().old_values_.erase(id);
      throw;
    }
    APIARY_CHECK(value.id == id);  // ids belong to the index
    if (same_keys(*backup, value)) return;
    if (container_.modify(
            it, [](Object&) {}, [&](Object& o) { o = std::move(*backup); }))
      return;
    if (recorded_now) top().old_values_.erase(id);
    throw unique_key_violation("undo_index::modify: unique key already taken");
  }

  // Removes obj, which must be an element of this index.
  // strong: only reserving room in the undo state can fail (std::bad_alloc), before anything
  // changes.
  void remove(const Object& obj) {
    const auto it = container_.iterator_to(obj);
    if (depth_ == 0) {
      container_.erase(it);
      return;
    }
    undo_state& s = top();
    const id_type id = obj.id;
    if (id >= s.old_next_id_) {  // created in this session: forget it
      erase_id(s.new_ids_, id);
      container_.erase(it);
      return;
    }
    reserve_more(s.removed_, 1);
    node_type node = container_.extract(it);
    if (auto ov = s.old_values_.find(id); ov != s.old_values_.end()) {
      node.value() = std::move(ov->second);  // remember the value at session start
      s.old_values_.erase(ov);
    }
    s.removed_.push_back({std::move(node)});
  }

  const Object* find(id_type id) const {
    auto it = container_.find(id);
    return it == container_.end() ? nullptr : &*it;
  }
  // Throws std::out_of_range when there is no such object.
  const Object& get(id_type id) const {
    const Object* o = find(id);
    if (o == nullptr) throw std::out_of_range("undo_index::get: no object with id " + std::to_string(id));
    return *o;
  }
  // Lookup through another index, by its tag.
  template <class Tag, class Key>
  const Object* find(const Key& key) const {
    const auto& idx = container_.template get<Tag>();
    auto it = idx.find(key);
    return it == idx.end() ? nullptr : &*it;
  }
  template <class Tag, class Key>
  const Object& get(const Key& key) const {
    const Object* o = find<Tag>(key);
    if (o == nullptr) throw std::out_of_range("undo_index::get: key not found");
    return *o;
  }
  // Read-only view of another index (ranges, ordered walks).
  template <class Tag>
  const auto& get() const {
    return container_.template get<Tag>();
  }
  const container_type& indices() const { return container_; }
  std::size_t size() const { return container_.size(); }
  // The index type behind Tag (for undo_index_detail::bind_buckets).
  template <class Tag>
  using hashed_index_type = typename container_type::template index<Tag>::type;

  // Batched lookups in a hashed index larger than the caches: start loading the bucket key
  // falls in (prefetch_bucket), and a while later, the bucket loaded by then, the first
  // object in it (prefetch_bucket_head), so that the lookup or insert of key that follows
  // waits for neither. Hints only: they change nothing, and do nothing for an index whose
  // buckets are not bound (undo_index_detail).
  template <class Tag, class Key>
  void prefetch_bucket(const Key& key) const {
    if (const auto* b = bucket_of<Tag>(key)) __builtin_prefetch(b);
  }
  template <class Tag, class Key>
  void prefetch_bucket_head(const Key& key) const {
    const auto* b = bucket_of<Tag>(key);
    if (b == nullptr) return;
    // The object lies before the index's links in the node (by how much depends on the
    // indexes after this one): every line of the object, which the lookup compares and a
    // modify copies whole, and the line of the links.
    if (const auto head = b->prior()) {
      using node = std::remove_cvref_t<decltype(*container_.template get<Tag>().begin().get_node())>;
      const auto* object = reinterpret_cast<const char*>(&node::from_impl(head)->value());
      for (std::size_t at = 0; at < sizeof(Object); at += undo_index_detail::cache_line)
        __builtin_prefetch(object + at);
      __builtin_prefetch(object + sizeof(Object) - 1);
      __builtin_prefetch(head);
    }
  }
  // A while after prefetch_bucket_head (its lines loaded by then): the node after the first
  // one in the index's list, which a lookup that does not match the first object reads to
  // tell whether the bucket ends there. A hint only.
  template <class Tag, class Key>
  void prefetch_bucket_next(const Key& key) const {
    const auto* b = bucket_of<Tag>(key);
    if (b == nullptr) return;
    if (const auto head = b->prior()) __builtin_prefetch(head->next());
  }

  // Batched removals from a hashed index larger than the caches: unlinking an object from
  // the index Tag writes the links of its neighbours in the index's one list of nodes, not
  // only its own. In three stages, each a while before remove(obj) and reading only what the
  // one before it loaded: prefetch_unlink_node loads obj and its links in Tag;
  // prefetch_unlink the node before it in that list and what its own next link points at
  // (the next node, or the next bucket's slot when obj ends its bucket);
  // prefetch_unlink_late the slot of obj's bucket (held by the node before it) and the node
  // that starts the next bucket. Hints only: they read the links as they are when called,
  // and change nothing. They use Boost.MultiIndex's node layout (get_node, prior, next), as
  // prefetch_bucket_head does.
  template <class Tag>
  void prefetch_unlink_node(const Object& obj) const {
    __builtin_prefetch(&obj);
    __builtin_prefetch(container_.template get<Tag>().iterator_to(obj).get_node());
  }
  template <class Tag>
  void prefetch_unlink(const Object& obj) const {
    const auto* x = container_.template get<Tag>().iterator_to(obj).get_node();
    __builtin_prefetch(x->prior());
    __builtin_prefetch(x->next());
  }
  template <class Tag>
  void prefetch_unlink_late(const Object& obj) const {
    const auto* x = container_.template get<Tag>().iterator_to(obj).get_node();
    __builtin_prefetch(x->prior()->next());
    if (const auto* first = x->next()->prior()) __builtin_prefetch(first);
  }

  // Sizes a hashed index's table for n objects now (a rehash), so it does not rehash while
  // it grows to n: a rehash relinks every node, and of millions of them takes most of a
  // second. Not undoable, and not needed to be: it changes no object.
  template <class Tag>
  void reserve(std::size_t n) {
    container_.template get<Tag>().reserve(n);
  }
  // Bytes of object memory the index holds: its nodes (including those its undo states keep
  // for removed objects) and hash buckets; not what the objects own outside (strings).
  std::size_t bytes() const noexcept { return counted_.bytes(); }
  id_type next_id() const { return next_id_; }

  // --- loading a saved state (no session open: a bug otherwise) ---------------------------

  // Inserts obj with the id it has, which must be at least next_id() (a bug otherwise):
  // objects come in ascending id order, so the id index takes each at its end. next_id()
  // becomes obj.id + 1. strong: a unique key already taken throws unique_key_violation.
  const Object& insert_saved(Object&& obj) {
    APIARY_CHECK(depth_ == 0 && obj.id >= next_id_ && obj.id != std::numeric_limits<id_type>::max());
    const std::size_t before = container_.size();
    const auto it = container_.emplace_hint(container_.end(), std::move(obj));
    if (container_.size() == before) throw unique_key_violation("undo_index::insert_saved: unique key already taken");
    next_id_ = it->id + 1;
    return *it;
  }
  // The id the next create() takes, when objects created last were removed since: at least
  // next_id() (a bug otherwise).
  void set_next_id(id_type id) {
    APIARY_CHECK(depth_ == 0 && id >= next_id_);
    next_id_ = id;
  }

  // --- undo sessions ---------------------------------------------------------------------

  // Pushes an empty undo state; revision() goes up by one.
  // strong: only allocating a new state can fail, and with keep_alive a recycled one is used.
  void start_undo_session() override {
    if (depth_ == states_.size()) states_.push_back(make_state());
    undo_state& s = *states_[depth_];
    s.old_next_id_ = next_id_;
    s.revision_ = ++revision_;
    ++depth_;
  }

  // Restores the objects and next_id() to what they were when the top session started and
  // pops it; revision() goes down by one. Cannot fail: erasing never fails, values are moved
  // back into their own nodes and removed nodes are linked back in, and the keys restored
  // were consistent before. (A modified object whose old key is held by another modified
  // object is put back after that one; only that rare case allocates, and out of memory
  // there aborts.)
  void undo() noexcept override {
    if (depth_ == 0) return;
    undo_state& s = top();
    if (!s.empty()) {
      for (auto id = s.new_ids_.rbegin(); id != s.new_ids_.rend(); ++id) {
        auto it = container_.find(*id);
        APIARY_CHECK(it != container_.end());
        container_.erase(it);
      }
      for (auto& [id, old] : s.old_values_) {
        auto it = container_.find(id);
        APIARY_CHECK(it != container_.end());
        if (same_keys(*it, old)) {
          const_cast<Object&>(*it) = std::move(old);           // NOLINT(cppcoreguidelines-pro-type-const-cast)
        } else if (!container_.replace(it, std::move(old))) {  // old key still held: retry below
          s.removed_.push_back({container_.extract(it)});
          // A replace() that fails leaves its argument as it was.
          s.removed_.back().node.value() = std::move(old);  // NOLINT(bugprone-use-after-move)
        }
      }
      for (removed_node& r : s.removed_) {
        auto result = container_.insert(std::move(r.node));
        APIARY_CHECK(result.inserted);
      }
    }
    next_id_ = s.old_next_id_;
    pop_top();
    --revision_;
  }

  // Merges the top state into the one below it (or, when it is the only one, drops it: its
  // changes become permanent) and pops it; revision() goes down by one unless the state was
  // the only one. The objects do not change. Merge rules, A = below, B = top, per id:
  //   A \ B       | create  | modify(was Y)  | remove(was Y)
  //   nothing     | create  | modify(was Y)  | remove(was Y)
  //   create      |  n/a    | create         | nothing (forgotten)
  //   modify(X)   |  n/a    | modify(was X)  | remove(was X)
  //   remove(X)   |  n/a    |  n/a           | n/a
  // strong: reserve_for_squash can fail, squash_reserved cannot.
  void squash() {
    reserve_for_squash();
    squash_reserved();
  }

  // strong: grows A's containers so the merge cannot allocate.
  void reserve_for_squash() override {
    if (depth_ < 2) return;
    const undo_state& b = top();
    undo_state& a = below_top();
    if (b.empty() || swaps_on_squash(a, b)) return;  // nothing to merge, or a swap of containers
    reserve_more(a.new_ids_, b.new_ids_.size());
    reserve_more(a.removed_, b.removed_.size());
    const std::size_t need = a.old_values_.size() + b.old_values_.size();
    if (need > a.old_values_.max_load()) a.old_values_.reserve(std::max(need, a.old_values_.bucket_count() + 1));
  }

  // Requires reserve_for_squash() right before, with nothing in between.
  void squash_reserved() noexcept override {
    if (depth_ == 0) return;
    if (depth_ == 1) {  // nothing left to undo it into
      drop_bottom(1);
      return;
    }
    undo_state& b = top();
    undo_state& a = below_top();
    if (!b.empty()) {
      if (swaps_on_squash(a, b)) {
        // Every object B recorded existed when A started, so B's records are A's records.
        a.new_ids_.swap(b.new_ids_);
        a.old_values_.swap(b.old_values_);
        a.removed_.swap(b.removed_);
      } else {
        merge_into(a, b);
      }
    }
    pop_top();
    --revision_;
  }

  // Drops the undo states of revisions <= revision: their changes can no longer be undone.
  void commit(std::int64_t revision) noexcept override {
    std::size_t n = 0;
    while (n < depth_ && states_[n]->revision_ <= revision) ++n;
    drop_bottom(n);
  }

  void undo_all() noexcept {
    while (depth_ > 0) undo();
  }

  // Only with no session open (a bug otherwise).
  void set_revision(std::int64_t revision) override {
    APIARY_CHECK(depth_ == 0);
    revision_ = revision;
  }
  std::int64_t revision() const noexcept override { return revision_; }
  std::size_t undo_depth() const noexcept override { return depth_; }
  // 0 is the oldest state; requires i < undo_depth().
  const undo_state& undo_state_at(std::size_t i) const {
    APIARY_CHECK(i < depth_);
    return *states_[i];
  }
  // States kept for reuse (keep_alive) beyond the open ones.
  std::size_t spare_states() const { return states_.size() - depth_; }

 private:
  struct state_deleter {
    std::pmr::memory_resource* resource;
    void operator()(undo_state* s) const noexcept {
      s->~undo_state();
      resource->deallocate(s, sizeof(undo_state), alignof(undo_state));
    }
  };
  using state_ptr = std::unique_ptr<undo_state, state_deleter>;

  state_ptr make_state() {
    void* p = undo_resource_->allocate(sizeof(undo_state), alignof(undo_state));
    return state_ptr(::new (p) undo_state(undo_resource_), state_deleter{undo_resource_});
  }

  // The bucket of key in the hashed index Tag, or null when its buckets are not bound.
  template <class Tag, class Key>
  auto bucket_of(const Key& key) const {
    using index = hashed_index_type<Tag>;
    const auto member = undo_index_detail::hashed_buckets<index>::member;
    const index& idx = container_.template get<Tag>();
    using bucket = std::remove_cvref_t<decltype(*(idx.*member).at(0))>;
    if (member == nullptr) return static_cast<const bucket*>(nullptr);
    const auto& buckets = idx.*member;
    return static_cast<const bucket*>(&*buckets.at(buckets.position(idx.hash_function()(key))));
  }

  static constexpr std::size_t index_count = boost::mpl::size<typename container_type::index_type_list>::value;

  // Whether a and b have the same key in every index (so either can stand where the other is).
  bool same_keys(const Object& a, const Object& b) const {
    return same_keys(a, b, std::make_index_sequence<index_count>{});
  }
  template <std::size_t... N>
  bool same_keys(const Object& a, const Object& b, std::index_sequence<N...> /*indexes*/) const {
    return (... &&
            (container_.template get<N>().key_extractor()(a) == container_.template get<N>().key_extractor()(b)));
  }

  // Squash swaps B's containers into an empty A instead of merging, unless A's have more
  // room: then B's few records are merged, and the room stays where the large sessions are.
  static bool swaps_on_squash(const undo_state& a, const undo_state& b) noexcept {
    return a.empty() && !a.has_more_room(b);
  }

  undo_state& top() { return *states_[depth_ - 1]; }
  undo_state& below_top() { return *states_[depth_ - 2]; }

  void pop_top() noexcept {
    --depth_;
    if (keep_alive_) {
      states_[depth_]->clear();
    } else {
      states_.pop_back();  // without keep_alive nothing sits above depth_
    }
  }

  // Removes the n oldest states; with keep_alive they are cleared and parked above the open
  // ones for reuse.
  void drop_bottom(std::size_t n) noexcept {
    if (n == 0) return;
    const auto first = states_.begin();
    const auto nth = first + static_cast<std::ptrdiff_t>(n);
    if (keep_alive_) {
      for (auto it = first; it != nth; ++it) (*it)->clear();
      std::rotate(first, nth, first + static_cast<std::ptrdiff_t>(depth_));
    } else {
      states_.erase(first, nth);
    }
    depth_ -= n;
  }

  // The general case of squash(); A's containers have room for everything B adds.
  void merge_into(undo_state& a, undo_state& b) noexcept {
    for (removed_node& r : b.removed_) {
      const id_type id = r.node.value().id;
      if (id >= a.old_next_id_) {  // create + remove: nothing to undo any more
        erase_id(a.new_ids_, id);
        continue;  // the node is freed when b is cleared
      }
      if (auto ov = a.old_values_.find(id); ov != a.old_values_.end()) {
        r.node.value() = std::move(ov->second);  // modify(was X) + remove: remove(was X)
        a.old_values_.erase(ov);
      }
      a.removed_.push_back(std::move(r));
    }
    for (auto& [id, old] : b.old_values_) {
      if (id >= a.old_next_id_) continue;             // create + modify: still a create
      a.old_values_.try_emplace(id, std::move(old));  // keeps A's older value if present
    }
    // B's ids are all above A's (ids only grow), so A.new_ids stays sorted.
    a.new_ids_.insert(a.new_ids_.end(), b.new_ids_.begin(), b.new_ids_.end());
  }

  static void erase_id(std::pmr::vector<id_type>& ids, id_type id) noexcept {
    auto pos = std::lower_bound(ids.begin(), ids.end(), id);
    APIARY_CHECK(pos != ids.end() && *pos == id);
    ids.erase(pos);
  }

  // Room for `extra` more elements, growing geometrically (reserve alone grows exactly).
  template <class Vector>
  static void reserve_more(Vector& v, std::size_t extra) {
    if (v.capacity() - v.size() >= extra) return;
    v.reserve(std::max(v.size() + extra, std::max<std::size_t>(8, 2 * v.capacity())));
  }

  // Everything the index keeps, in one block from index_options::home, so that a mapped
  // state holds an index whole and another process can take it up (attach_body). The
  // members below are references into it: the code reads as if they were the index's own.
  struct body {
    explicit body(const index_options& options)
        : counted(options.objects),
          container(allocator_type(&counted)),
          states(options.undo),
          undo_resource(options.undo),
          keep_alive(options.keep_alive) {}
    counting_resource counted;  // before the container, which allocates from it
    container_type container;
    std::pmr::vector<state_ptr> states;  // [0, depth) open, bottom first; above: spares
    std::size_t depth = 0;
    std::int64_t revision = 0;
    id_type next_id = 0;
    std::pmr::memory_resource* undo_resource;
    bool keep_alive;
  };

  static body& make_body(const index_options& options) {
    void* p = options.home->allocate(sizeof(body), alignof(body));
    try {
      return *::new (p) body(options);
    } catch (...) {
      options.home->deallocate(p, sizeof(body), alignof(body));
      throw;
    }
  }

  undo_index(body& b, const index_options& options)
      : body_(b),
        counted_(b.counted),
        container_(b.container),
        states_(b.states),
        depth_(b.depth),
        revision_(b.revision),
        next_id_(b.next_id),
        undo_resource_(b.undo_resource),
        keep_alive_(b.keep_alive),
        home_(options.home),
        left_in_place_(options.left_in_place) {}

  body& body_;
  counting_resource& counted_;
  container_type& container_;
  std::pmr::vector<state_ptr>& states_;
  std::size_t& depth_;
  std::int64_t& revision_;
  id_type& next_id_;
  std::pmr::memory_resource*& undo_resource_;
  bool& keep_alive_;
  std::pmr::memory_resource* home_;
  bool left_in_place_;
};

}  // namespace apiary::core
