// thread_name: names the calling thread as the kernel shows it (/proc/<pid>/task/<tid>/comm,
// `top -H`, perf's samples), so that a profile of a run can tell its threads apart: the
// writer is "writer", each producer "producer-N". The kernel keeps 15 characters; a longer
// name is cut. The process's main thread keeps its name (the program's), which is what
// `ps` and `pgrep` show for the whole process.
#pragma once

#include <string_view>
#include <thread>

namespace apiary::core {

// Names the calling thread; best effort (a failure leaves the old name). Not for the main
// thread. A system call, about a microsecond.
void name_this_thread(std::string_view name) noexcept;
// Names `t` (started, not joined) from the thread that started it: the name is set when this
// returns, whatever `t` does meanwhile.
void name_thread(std::thread& t, std::string_view name) noexcept;

}  // namespace apiary::core
