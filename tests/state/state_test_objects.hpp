// Object types, indexes and state snapshots shared by the state tests.
#pragma once

#include <unistd.h>

#include <concepts>
#include <cstdint>
#include <filesystem>
#include <memory_resource>
#include <ostream>
#include <string>
#include <vector>

#include <boost/multi_index/hashed_index.hpp>
#include <boost/multi_index/member.hpp>
#include <boost/multi_index/ordered_index.hpp>

#include "apiary/core/state/database.hpp"
#include "apiary/core/state/state_vector.hpp"
#include "apiary/core/state/undo_index.hpp"

namespace apiary::core::test {

namespace bmi = boost::multi_index;

struct by_id;
struct by_name;
struct by_balance;
struct by_owner;

// Ordered primary index, a unique string key and a non-unique key. The name is a state_string,
// whose memory follows the object into a state region.
struct account {
  std::uint64_t id = 0;
  state_string name;
  std::int64_t balance = 0;
  friend bool operator==(const account&, const account&) = default;
  friend std::ostream& operator<<(std::ostream& os, const account& a) {
    return os << "{" << a.id << "," << a.name.view() << "," << a.balance << "}";
  }
};

using account_index = undo_index<
    account,
    bmi::indexed_by<
        bmi::ordered_unique<bmi::tag<by_id>, bmi::member<account, std::uint64_t, &account::id>>,
        bmi::ordered_unique<bmi::tag<by_name>, bmi::member<account, state_string, &account::name>, std::less<>>,
        bmi::ordered_non_unique<bmi::tag<by_balance>, bmi::member<account, std::int64_t, &account::balance>>>>;

inline const account& add(account_index& idx, const std::string& name, std::int64_t balance = 0) {
  return idx.create([&](account& a) {
    a.name = name;
    a.balance = balance;
  });
}

// Hashed primary index and a unique composite-free key.
struct item {
  std::uint32_t id = 0;
  std::uint32_t owner = 0;
  std::uint64_t value = 0;
  friend bool operator==(const item&, const item&) = default;
  friend std::ostream& operator<<(std::ostream& os, const item& i) {
    return os << "{" << i.id << "," << i.owner << "," << i.value << "}";
  }
};

using item_index = undo_index<
    item, bmi::indexed_by<bmi::hashed_unique<bmi::tag<by_id>, bmi::member<item, std::uint32_t, &item::id>>,
                          bmi::ordered_non_unique<bmi::tag<by_owner>, bmi::member<item, std::uint32_t, &item::owner>>>>;

// Everything observable about the two indexes: objects in id order, next ids, and the
// secondary indexes agreeing with the primary one.
struct snapshot {
  std::vector<account> accounts;
  std::uint64_t account_next_id = 0;
  std::vector<item> items;
  std::uint32_t item_next_id = 0;
  friend bool operator==(const snapshot&, const snapshot&) = default;
};

inline std::ostream& operator<<(std::ostream& os, const snapshot& s) {
  os << "accounts(next " << s.account_next_id << "):";
  for (const auto& a : s.accounts) os << " " << a;
  os << " items(next " << s.item_next_id << "):";
  for (const auto& i : s.items) os << " " << i;
  return os;
}

// Returns false if a secondary index disagrees with the primary one.
inline bool indexes_consistent(const account_index& accounts, const item_index& items) {
  std::size_t n = 0;
  for (const account& a : accounts.get<by_name>()) {
    if (accounts.find(a.id) != &a || accounts.find<by_name>(a.name) != &a) return false;
    ++n;
  }
  if (n != accounts.size() || accounts.get<by_balance>().size() != n) return false;
  n = 0;
  for (const item& i : items.get<by_owner>()) {
    if (items.find(i.id) != &i) return false;
    ++n;
  }
  return n == items.size();
}

inline snapshot take_snapshot(const account_index& accounts, const item_index& items) {
  snapshot s;
  s.accounts.assign(accounts.indices().begin(), accounts.indices().end());
  s.account_next_id = accounts.next_id();
  for (std::uint32_t id = 0; id < items.next_id(); ++id)
    if (const item* i = items.find(id)) s.items.push_back(*i);
  s.item_next_id = items.next_id();
  return s;
}

inline snapshot take_snapshot(const database& db) {
  return take_snapshot(db.get_index<account_index>(), db.get_index<item_index>());
}

// Counts what goes through it, to prove where allocations happen.
class counting_resource : public std::pmr::memory_resource {
 public:
  std::size_t allocations = 0;
  std::size_t live = 0;

 private:
  void* do_allocate(std::size_t bytes, std::size_t align) override {
    ++allocations;
    ++live;
    return std::pmr::new_delete_resource()->allocate(bytes, align);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    --live;
    std::pmr::new_delete_resource()->deallocate(p, bytes, align);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
};

struct injected_failure {};

// prefix followed by n ("a7"). (Not `"a" + std::to_string(n)`: GCC 12 warns falsely on it.)
template <std::integral N>
std::string numbered(const char* prefix, N n) {
  std::string s(prefix);
  s += std::to_string(n);
  return s;
}

// A path for a test's file in the system's temporary directory, unique to this process.
inline std::filesystem::path temporary_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("apiary-" + std::to_string(::getpid()) + "-" + name);
}

}  // namespace apiary::core::test
