// The state objects' field lists (state_objects.hpp: each object's static fields(f) calls
// f(name, member pointer) per data member, in declaration order), checked at compile time
// against each object's declaration: Boost.PFR counts an aggregate's data members, and a list
// must name as many, none twice. A member missing from its object's list fails the build of
// everything that includes this header (the chain library does, through state_digest.hpp).
#pragma once

#include <cstddef>
#include <type_traits>

#include <boost/pfr/core.hpp>

#include "apiary/core/chain/state_objects.hpp"

namespace apiary::core {

// A struct that lists its fields as the state objects do: T::fields(f) calls f(name, &T::m).
template <class T>
concept state_fields = requires {
  T::fields([](const char*, auto) {});
};

template <state_fields T>
constexpr std::size_t listed_field_count() {
  std::size_t n = 0;
  T::fields([&n](const char*, auto) { ++n; });
  return n;
}

// Whether each member T::fields names is named there once only.
template <state_fields T>
constexpr bool lists_each_field_once() {
  bool once = true;
  T::fields([&once](const char*, auto a) {
    using A = decltype(a);  // here: in the inner lambda GCC 12 would see the copy of a as const
    std::size_t times = 0;
    T::fields([&times, a](const char*, auto b) {
      if constexpr (std::is_same_v<A, decltype(b)>) times += a == b ? 1 : 0;
    });
    once = once && times == 1;
  });
  return once;
}

// Whether T::fields names every data member of T once: as many as T declares, none twice.
template <state_fields T>
constexpr bool lists_every_field() {
  return listed_field_count<T>() == boost::pfr::tuple_size_v<T> && lists_each_field_once<T>();
}

static_assert(lists_every_field<manabar>(), "manabar::fields must name each of its members once");
static_assert(lists_every_field<account_object>(), "account_object::fields must name each of its members once");
static_assert(lists_every_field<comment_object>(), "comment_object::fields must name each of its members once");
static_assert(lists_every_field<comment_vote_object>(),
              "comment_vote_object::fields must name each of its members once");
static_assert(lists_every_field<block_summary_object>(),
              "block_summary_object::fields must name each of its members once");
static_assert(lists_every_field<global_properties_object>(),
              "global_properties_object::fields must name each of its members once");
static_assert(lists_every_field<transaction_object>(), "transaction_object::fields must name each of its members once");
static_assert(lists_every_field<custom_op_counter_object>(),
              "custom_op_counter_object::fields must name each of its members once");

}  // namespace apiary::core
