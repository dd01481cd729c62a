# Per-target helpers: warnings (errors with APIARY_WERROR) and the sanitizer of the preset.

# Clang also checks that every member a mutex guards is used with it held (APIARY_GUARDED_BY,
# apiary/core/base/mutex.hpp); GCC has no such analysis.
function(apiary_target_defaults target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
    -Wimplicit-fallthrough)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -Wthread-safety)
  endif()
  if(APIARY_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  # In a unity build every source is an included file, where GCC takes a pimpl's member of a
  # file-local type for a header's class; the builds without batches still check it.
  if(APIARY_UNITY AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
endfunction()

# Sanitizer builds keep line tables only (-g1, after the build type's -g): their reports
# still name file and line, and compiling takes about a fifth less (chain.cpp under ASan:
# 58.5 s with -g, 44.2 s with -g1). They compile at -O1 (after the build type's -O2), the
# level the sanitizers' documentation names: a third less compile time again (chain.cpp
# under ASan: 52 s of CPU instead of 79 s), the largest part of CI's sanitizer stages.
if(NOT APIARY_SANITIZE STREQUAL "")
  add_compile_options(-g1 -O1)
endif()
if(APIARY_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(APIARY_SANITIZE STREQUAL "thread")
  # -Wno-tsan: GCC warns that TSan does not model atomic_thread_fence, which Boost.Asio's
  # handler invocation uses beside its mutexes (the async submission pool); the pool's
  # synchronization TSan sees is the scheduler's mutex and the futures.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer -Wno-tsan)
  add_link_options(-fsanitize=thread)
elseif(NOT APIARY_SANITIZE STREQUAL "")
  message(FATAL_ERROR "APIARY_SANITIZE must be empty, 'address' or 'thread', not '${APIARY_SANITIZE}'")
endif()

# Adds a library for one top-level folder: apiary_<name> with the alias apiary::<name>.
function(apiary_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(apiary_${name} ${ARG_SOURCES})
  add_library(apiary::${name} ALIAS apiary_${name})
  target_include_directories(apiary_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(apiary_${name} PUBLIC ${ARG_DEPS})
  apiary_target_defaults(apiary_${name})
endfunction()

# Precompiled headers: the standard and third-party headers that most sources of a target
# include, parsed once per target instead of once per source (a harness source spends more
# than half its compile time in them: Boost.MultiIndex, fmt). Only headers that declare
# belong here: a header that defines objects makes every source of the target compile them.
# CLI11 is one (its validators are constants with constructors): with it (and spdlog's logger,
# which few sources use) precompiled, the release build's harness took 447 s of CPU instead of
# 222 s, and a source that parses no command line (cycle/signals.cpp) 5.3 s instead of 0.8 s.
# A source must still include what it uses: check-thread-safety and the builds with
# APIARY_PCH=OFF compile without them. ccache caches such compiles only with sloppiness
# pch_defines,time_macros (scripts/test.sh sets it); otherwise it runs the compiler.
option(APIARY_PCH "Precompile the common standard and third-party headers once per target" ON)
set(APIARY_PCH_COMMON
  <algorithm> <array> <atomic> <chrono> <cstddef> <cstdint> <cstring> <functional> <map>
  <memory> <optional> <span> <stdexcept> <string> <string_view> <utility> <vector>
  <boost/container/small_vector.hpp> <boost/multi_index_container.hpp>
  <boost/multi_index/hashed_index.hpp> <boost/multi_index/member.hpp>
  <boost/multi_index/ordered_index.hpp> <boost/unordered/unordered_flat_map.hpp>
  <boost/unordered/unordered_flat_set.hpp>)

# apiary_precompile(TARGET [HEADER ...]): the common headers and the given ones, precompiled
# for TARGET's sources.
function(apiary_precompile target)
  if(APIARY_PCH)
    target_precompile_headers(${target} PRIVATE ${APIARY_PCH_COMMON} ${ARGN})
  endif()
endfunction()
