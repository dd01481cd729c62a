// reattach_vtable: makes an object with virtual functions that another process left in a
// mapped state (state_region.hpp) callable here.
//
// The state is mapped at the address it was made at, so every pointer in it holds, except
// one kind: an object's virtual table pointer, which points into the program that made it,
// and this program's tables lie elsewhere (address space randomization; another build with
// the same layout). The objects of the state that have virtual functions are its memory
// resources (std::pmr containers call them through memory_resource*), and each is reattached
// once when the state is opened, before anything calls it.
//
// Under the Itanium C++ ABI (GCC and Clang on Linux) a class whose base chain starts with a
// polymorphic class keeps its virtual table pointer in its first word, and only there: a
// fresh object of the same type has the right one, and copying that word over is the whole
// repair. The other bytes, the object's state, stay as they were.
#pragma once

#include <cstring>
#include <type_traits>
#include <utility>

namespace apiary::core {

// stale: an object of exactly type T (not of a type derived from it) whose bytes came from
// another process. args: any arguments T can be built from; the temporary built from them
// is destroyed right after, so it must own nothing then.
template <class T, class... Args>
void reattach_vtable(T* stale, Args&&... args) {
  static_assert(std::is_polymorphic_v<T> && std::is_final_v<T>,
                "only a final class is known to have its table pointer exactly where a fresh one has");
  const T fresh(std::forward<Args>(args)...);
  std::memcpy(static_cast<void*>(stale), static_cast<const void*>(&fresh), sizeof(void*));
}

}  // namespace apiary::core
