// The mutex every module locks, its two locks and a condition variable for them, annotated
// for clang's thread-safety analysis (-Wthread-safety; libstdc++'s std::mutex carries no
// annotations, so the analysis cannot see through it):
//
//   core::mutex               std::mutex, a capability
//   core::lock_guard          std::lock_guard: holds the mutex for its scope
//   core::unique_lock         std::unique_lock<std::mutex>: holds it for its scope, or until unlock()
//   core::condition_variable  std::condition_variable, waiting with a core::unique_lock
//
// Each is the std type underneath with inline forwarding calls: the same code at -O3. A
// member a mutex protects says so, and the analysis checks every read and write of it:
//
//   mutable core::mutex mutex_;
//   std::vector<item> items_ APIARY_GUARDED_BY(mutex_);
//   void trim() APIARY_REQUIRES(mutex_);  // a helper called with the lock held
//
// A wait's predicate is a lambda of its own, which the analysis checks alone: it says that it
// runs with the lock held (the wait calls it so),
//
//   cv_.wait(lock, [this]() APIARY_REQUIRES(mutex_) { return !items_.empty(); });
//
// The macros expand to nothing but under clang. scripts/check-thread-safety runs the analysis
// over the libraries; the clang builds (the fuzz preset) turn it on for every target.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>

#if defined(__clang__)
#define APIARY_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define APIARY_THREAD_ANNOTATION(x)
#endif

// On a type: it is a capability (a mutex), or an object that holds one for its lifetime.
#define APIARY_CAPABILITY(name) APIARY_THREAD_ANNOTATION(capability(name))
#define APIARY_SCOPED_CAPABILITY APIARY_THREAD_ANNOTATION(scoped_lockable)
// On a member or global: read and written only with the mutex held (PT_: the data it points to).
#define APIARY_GUARDED_BY(m) APIARY_THREAD_ANNOTATION(guarded_by(m))
#define APIARY_PT_GUARDED_BY(m) APIARY_THREAD_ANNOTATION(pt_guarded_by(m))
// On a mutex: the order in which two are taken.
#define APIARY_ACQUIRED_BEFORE(...) APIARY_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define APIARY_ACQUIRED_AFTER(...) APIARY_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
// On a function: called with the mutex held; takes it; releases it; called without it.
#define APIARY_REQUIRES(...) APIARY_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define APIARY_ACQUIRE(...) APIARY_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define APIARY_TRY_ACQUIRE(...) APIARY_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define APIARY_RELEASE(...) APIARY_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define APIARY_EXCLUDES(...) APIARY_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define APIARY_RETURN_CAPABILITY(m) APIARY_THREAD_ANNOTATION(lock_returned(m))
// On a function the analysis cannot follow; say why beside it.
#define APIARY_NO_THREAD_SAFETY_ANALYSIS APIARY_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace apiary::core {

class condition_variable;
class unique_lock;

class APIARY_CAPABILITY("mutex") mutex {
 public:
  mutex() = default;
  mutex(const mutex&) = delete;
  mutex& operator=(const mutex&) = delete;

  void lock() APIARY_ACQUIRE() { m_.lock(); }
  bool try_lock() APIARY_TRY_ACQUIRE(true) { return m_.try_lock(); }
  void unlock() APIARY_RELEASE() { m_.unlock(); }

 private:
  friend class unique_lock;
  std::mutex m_;
};

class APIARY_SCOPED_CAPABILITY lock_guard {
 public:
  explicit lock_guard(mutex& m) APIARY_ACQUIRE(m) : m_(m) { m_.lock(); }
  ~lock_guard() APIARY_RELEASE() { m_.unlock(); }
  lock_guard(const lock_guard&) = delete;
  lock_guard& operator=(const lock_guard&) = delete;

 private:
  mutex& m_;
};

// Holds the mutex from construction; unlock() lets it go early (the destructor then does
// nothing), lock() takes it again.
class APIARY_SCOPED_CAPABILITY unique_lock {
 public:
  explicit unique_lock(mutex& m) APIARY_ACQUIRE(m) : lock_(m.m_) {}
  ~unique_lock() APIARY_RELEASE() = default;
  unique_lock(const unique_lock&) = delete;
  unique_lock& operator=(const unique_lock&) = delete;

  void lock() APIARY_ACQUIRE() { lock_.lock(); }
  void unlock() APIARY_RELEASE() { lock_.unlock(); }

 private:
  friend class condition_variable;
  std::unique_lock<std::mutex> lock_;
};

// Waits with a core::unique_lock held; as std::condition_variable, the lock is held again
// when a wait returns, and a predicate is called with it held.
class condition_variable {
 public:
  void notify_one() noexcept { cv_.notify_one(); }
  void notify_all() noexcept { cv_.notify_all(); }

  void wait(unique_lock& lock) { cv_.wait(lock.lock_); }
  template <class Predicate>
  void wait(unique_lock& lock, Predicate ready) {
    cv_.wait(lock.lock_, std::move(ready));
  }
  template <class Clock, class Duration>
  std::cv_status wait_until(unique_lock& lock, const std::chrono::time_point<Clock, Duration>& until) {
    return cv_.wait_until(lock.lock_, until);
  }
  template <class Rep, class Period, class Predicate>
  bool wait_for(unique_lock& lock, const std::chrono::duration<Rep, Period>& timeout, Predicate ready) {
    return cv_.wait_for(lock.lock_, timeout, std::move(ready));
  }

 private:
  std::condition_variable cv_;
};

}  // namespace apiary::core
