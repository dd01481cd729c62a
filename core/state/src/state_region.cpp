#include "apiary/core/state/state_region.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <string_view>
#include <system_error>

#include <boost/interprocess/indexes/null_index.hpp>
#include <boost/interprocess/managed_external_buffer.hpp>
#include <boost/interprocess/mem_algo/rbtree_best_fit.hpp>
#include <boost/interprocess/sync/mutex_family.hpp>

#include "apiary/core/state/node_pool.hpp"
#include "apiary/core/state/reattach.hpp"

namespace apiary::core {

namespace bip = boost::interprocess;

namespace {

using managed_buffer =
    bip::basic_managed_external_buffer<char, bip::rbtree_best_fit<bip::null_mutex_family>, bip::null_index>;
using segment_manager = managed_buffer::segment_manager;

constexpr std::string_view file_magic = "APIARYMS";
constexpr std::uint32_t file_version = 1;

// The arena as a memory resource: the segment's best-fit allocator.
class state_arena final : public std::pmr::memory_resource {
 public:
  explicit state_arena(segment_manager* manager) : manager_(manager) {}

 private:
  void* do_allocate(std::size_t bytes, std::size_t align) override {
    void* p = align <= alignof(std::max_align_t) ? manager_->allocate(bytes, std::nothrow)
                                                 : manager_->allocate_aligned(bytes, align, std::nothrow);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void do_deallocate(void* p, std::size_t /*bytes*/, std::size_t /*align*/) override { manager_->deallocate(p); }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  segment_manager* manager_;
};

// The file's first page. Integers in the machine's order: a state file is read by the builds
// of the machine that made it (its layout id says so).
struct file_header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_bytes;
  std::uint64_t base;
  std::uint64_t reserve;
  std::uint64_t segment_bytes;
  std::uint64_t core_offset;
  std::uint64_t payload_bytes;
  std::uint64_t content_digest[2];      // XXH3-128 of the segment's bytes
  std::uint64_t bookkeeping_digest[2];  // of the segment manager's header and the core
  std::uint64_t header_digest[2];       // of this page with this field zero
  std::byte payload[state_region::max_payload_bytes];
};
static_assert(sizeof(file_header) <= state_region::header_bytes);

std::atomic<state_region*> open_region{nullptr};

std::string errno_text() { return std::system_category().message(errno); }

void store(std::uint64_t (&out)[2], XXH128_hash_t h) {
  out[0] = h.low64;
  out[1] = h.high64;
}
bool same(const std::uint64_t (&a)[2], XXH128_hash_t h) { return a[0] == h.low64 && a[1] == h.high64; }

XXH128_hash_t header_digest_of(file_header h) {
  h.header_digest[0] = h.header_digest[1] = 0;
  return XXH3_128bits(&h, sizeof h);
}

// The fd of a file, closed on every way out.
struct file_descriptor {
  int fd = -1;
  explicit file_descriptor(int f) : fd(f) {}
  ~file_descriptor() {
    if (fd >= 0) ::close(fd);
  }
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
};

bool read_exactly(int fd, void* out, std::size_t bytes, off_t at) {
  auto* p = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, p, bytes, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    at += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

bool write_all(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd, p, std::min<std::size_t>(bytes, std::size_t{1} << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

struct state_region::segment {
  managed_buffer buffer;
};

struct state_region::core {
  explicit core(segment_manager* manager) : arena(manager), text(&arena) {}
  state_arena arena;
  node_pool text;
  void* root = nullptr;
};

std::uintptr_t state_region::base_address() noexcept {
#if defined(__SANITIZE_THREAD__)
  return std::uintptr_t{0x10} << 32;  // 64 GiB: inside ThreadSanitizer's low application range
#else
  return std::uintptr_t{0x2000} << 32;  // 32 TiB: above AddressSanitizer's shadow, below the usual mappings
#endif
}

state_region::state_region(std::uintptr_t base, std::size_t reserve)
    : base_(base),
      // The one place an address becomes a pointer: the region is where base_address() says.
      start_(reinterpret_cast<std::byte*>(base)),  // NOLINT(performance-no-int-to-ptr)
      reserve_(reserve) {}

state_region::~state_region() {
  segment_.reset();
  if (mapped_) ::munmap(start_, reserve_);
  state_region* self = this;
  open_region.compare_exchange_strong(self, nullptr);
}

// Claims [base_ + from, base_ + reserve_) as private anonymous memory, only if nothing is
// mapped there (MAP_FIXED_NOREPLACE; a kernel that ignores the flag places it elsewhere, which
// is refused the same way).
void state_region::map_anonymous(std::size_t from) {
  void* want = start_ + from;
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (from == 0 ? MAP_FIXED_NOREPLACE : MAP_FIXED);
  void* got = ::mmap(want, reserve_ - from, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (got == MAP_FAILED || got != want) {
    if (got != MAP_FAILED) ::munmap(got, reserve_ - from);
    const bool taken = got != MAP_FAILED || errno == EEXIST;
    throw state_region_error(
        "cannot map a state at " + std::to_string(base_) + " (" + std::to_string(reserve_ >> 20) +
        " MiB): " + (taken ? "another mapping of this process lies in that address range" : errno_text()));
  }
  mapped_ = true;
  // The state is one large block of memory read at random: in huge pages (where the kernel
  // gives them) a lookup misses the TLB far less than in 4 KiB ones. A hint; without it, small
  // pages.
  ::madvise(start_ + from, reserve_ - from, MADV_HUGEPAGE);
}

state_region::core& state_region::the_core() const noexcept { return *reinterpret_cast<core*>(start_ + core_offset_); }

std::unique_ptr<state_region> state_region::make(std::size_t reserve) {
  state_region* expected = nullptr;
  std::unique_ptr<state_region> r(new state_region(base_address(), reserve));
  if (!open_region.compare_exchange_strong(expected, r.get()))
    throw state_region_error("a state is open already: one mapped state per process");
  r->map_anonymous(0);
  r->segment_ = std::make_unique<segment>(segment{managed_buffer(bip::create_only, r->start_, reserve)});
  segment_manager* manager = r->segment_->buffer.get_segment_manager();
  void* at = manager->allocate(sizeof(core));
  ::new (at) core(manager);
  r->core_offset_ = static_cast<std::size_t>(static_cast<std::byte*>(at) - r->start_);
  return r;
}

std::pmr::memory_resource* state_region::memory() noexcept { return &the_core().arena; }
std::pmr::memory_resource* state_region::text_memory() noexcept { return &the_core().text; }
void* state_region::root() const noexcept { return the_core().root; }
void state_region::set_root(void* root) noexcept { the_core().root = root; }

state_region* state_region::of(const void* p) noexcept {
  state_region* r = open_region.load(std::memory_order_relaxed);
  return r != nullptr && r->contains(p) ? r : nullptr;
}

std::size_t state_region::used_bytes() const noexcept {
  const segment_manager* m = segment_->buffer.get_segment_manager();
  return m->get_size() - m->get_free_memory();
}

namespace {

XXH128_hash_t bookkeeping_digest(const std::byte* base, std::size_t core_offset, std::size_t core_bytes) {
  XXH3_state_t* s = XXH3_createState();
  if (s == nullptr) throw std::bad_alloc();
  XXH3_128bits_reset(s);
  XXH3_128bits_update(s, base, sizeof(segment_manager));
  XXH3_128bits_update(s, base + core_offset, core_bytes);
  const XXH128_hash_t h = XXH3_128bits_digest(s);
  XXH3_freeState(s);
  return h;
}

}  // namespace

void state_region::write(const std::filesystem::path& file, std::span<const std::byte> payload) const {
  if (payload.size() > max_payload_bytes)
    throw state_region_error(file.string() + ": the header's payload is too long");
  managed_buffer& buffer = segment_->buffer;
  buffer.get_segment_manager()->shrink_to_fit();  // the file holds the used part only; grown back below
  const std::size_t segment_bytes = buffer.get_size();
  auto header = std::make_unique<file_header>();
  std::memcpy(header->magic, file_magic.data(), sizeof header->magic);
  header->version = file_version;
  header->header_bytes = header_bytes;
  header->base = base_;
  header->reserve = reserve_;
  header->segment_bytes = segment_bytes;
  header->core_offset = core_offset_;
  header->payload_bytes = payload.size();
  if (!payload.empty()) std::memcpy(header->payload, payload.data(), payload.size());
  store(header->content_digest, XXH3_128bits(start_, segment_bytes));
  store(header->bookkeeping_digest, bookkeeping_digest(start_, core_offset_, sizeof(core)));
  store(header->header_digest, header_digest_of(*header));

  std::vector<std::byte> page(header_bytes);
  std::memcpy(page.data(), header.get(), sizeof(file_header));
  // An exclusive temporary name beside the file (two writers never share one, and nothing of
  // someone else's is truncated), renamed over it once whole.
  std::string temporary = file.string() + ".partial-XXXXXX";
  std::string failure;
  {
    file_descriptor out(::mkostemp(temporary.data(), O_CLOEXEC));
    if (out.fd < 0) {
      temporary.clear();
      failure = "cannot create " + file.string() + " (a temporary file beside it): " + errno_text();
    } else if (::fchmod(out.fd, 0644) != 0 || !write_all(out.fd, page.data(), page.size()) ||
               !write_all(out.fd, start_, segment_bytes) || ::fsync(out.fd) != 0) {
      failure = "cannot write " + file.string() + ": " + errno_text();
    }
  }
  buffer.grow(reserve_ - segment_bytes);
  if (failure.empty() && ::rename(temporary.c_str(), file.c_str()) != 0)
    failure = "cannot rename " + temporary + " to " + file.string() + ": " + errno_text();
  if (!failure.empty()) {
    if (!temporary.empty()) ::unlink(temporary.c_str());
    throw state_region_error(failure);
  }
}

std::unique_ptr<state_region> state_region::open(const std::filesystem::path& file, const open_options& options) {
  const auto started = std::chrono::steady_clock::now();
  const std::string name = file.string();
  auto fail = [&name](const std::string& what) { return state_region_error(name + ": " + what); };
  // Non-blocking, so that a FIFO without a writer is refused below rather than waited on.
  file_descriptor in(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (in.fd < 0) throw fail("cannot open: " + errno_text());
  auto header = std::make_unique<file_header>();
  struct stat st {};
  if (::fstat(in.fd, &st) != 0) throw fail("cannot read: " + errno_text());
  if (!S_ISREG(st.st_mode)) throw fail("not a regular file (a state file is one)");
  if (static_cast<std::size_t>(st.st_size) < sizeof(file_header) ||
      !read_exactly(in.fd, header.get(), sizeof(file_header), 0))
    throw fail("not a state file (shorter than a state file's header)");
  if (std::string_view(header->magic, sizeof header->magic) != file_magic)
    throw fail("not a state file (no APIARYMS magic)");
  if (header->version != file_version)
    throw fail("state file format " + std::to_string(header->version) + ", this build reads format " +
               std::to_string(file_version) + ": make the state again");
  if (!same(header->header_digest, header_digest_of(*header)))
    throw fail("the header's digest does not match: the file is damaged");
  if (header->header_bytes != header_bytes || header->payload_bytes > max_payload_bytes ||
      header->core_offset + sizeof(core) > header->segment_bytes || header->segment_bytes > header->reserve)
    throw fail("the header's sizes are inconsistent");
  if (header->base != base_address())
    throw fail("made to be mapped at " + std::to_string(header->base) + ", this build maps states at " +
               std::to_string(base_address()) + ": make the state with this build");
  if (static_cast<std::uint64_t>(st.st_size) < header_bytes + header->segment_bytes)
    throw fail("truncated: " + std::to_string(st.st_size) + " bytes, the header says " +
               std::to_string(header_bytes + header->segment_bytes));

  state_region* expected = nullptr;
  std::unique_ptr<state_region> r(new state_region(header->base, header->reserve));
  if (!open_region.compare_exchange_strong(expected, r.get()))
    throw fail("a state is open already: one mapped state per process");
  try {
    r->map_anonymous(0);
  } catch (const state_region_error& e) {
    throw fail(e.what());
  }
  void* at = r->start_;
  if (options.prefault) {
    // Every page the run's own before it starts, read in large pieces into the region's
    // anonymous memory (in huge pages, map_anonymous): a copy-on-write fault per page of a
    // private file mapping costs as long, and leaves the state in small pages.
    const auto t = std::chrono::steady_clock::now();
    if (!read_exactly(in.fd, at, header->segment_bytes, header_bytes)) throw fail("cannot read: " + errno_text());
    r->opened_.prefault_time = std::chrono::steady_clock::now() - t;
  } else if (::mmap(at, header->segment_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, in.fd, header_bytes) !=
             at) {
    throw fail("cannot map: " + errno_text());
  }
  r->core_offset_ = header->core_offset;
  if (!same(header->bookkeeping_digest, bookkeeping_digest(r->start_, r->core_offset_, sizeof(core))))
    throw fail("the allocator's bookkeeping does not match its digest: the file is damaged");
  r->opened_.map_time = std::chrono::steady_clock::now() - started - r->opened_.prefault_time;
  r->opened_.file_bytes = header->segment_bytes;
  r->segment_ = std::make_unique<segment>(segment{managed_buffer(bip::open_only, at, header->segment_bytes)});
  r->segment_->buffer.grow(header->reserve - header->segment_bytes);
  core& c = r->the_core();
  reattach_vtable(&c.arena, nullptr);
  node_pool::reattach(&c.text);
  r->file_ = file;
  r->file_segment_bytes_ = header->segment_bytes;
  r->payload_.assign(header->payload, header->payload + header->payload_bytes);
  std::memcpy(r->content_digest_.data(), header->content_digest, r->content_digest_.size());
  return r;
}

std::string state_region::verify_content() const {
  file_descriptor in(::open(file_.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.fd < 0) return file_.string() + ": cannot open: " + errno_text();
  XXH3_state_t* s = XXH3_createState();
  if (s == nullptr) throw std::bad_alloc();
  XXH3_128bits_reset(s);
  std::vector<char> chunk(std::size_t{8} << 20);
  std::size_t done = 0;
  bool ok = true;
  while (done < file_segment_bytes_) {
    const std::size_t n = std::min(chunk.size(), file_segment_bytes_ - done);
    if (!read_exactly(in.fd, chunk.data(), n, static_cast<off_t>(header_bytes + done))) {
      ok = false;
      break;
    }
    XXH3_128bits_update(s, chunk.data(), n);
    done += n;
  }
  const XXH128_hash_t h = XXH3_128bits_digest(s);
  XXH3_freeState(s);
  if (!ok) return file_.string() + ": cannot read the state's bytes: " + errno_text();
  std::uint64_t want[2];
  std::memcpy(want, content_digest_.data(), sizeof want);
  if (!same(want, h)) return file_.string() + ": the state's content does not match its digest: the file is damaged";
  return {};
}

}  // namespace apiary::core
