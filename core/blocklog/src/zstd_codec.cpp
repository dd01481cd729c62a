#include "apiary/core/blocklog/zstd_codec.hpp"

#include <zstd.h>
#include <zstd_errors.h>

#include <array>
#include <cstring>
#include <fstream>
#include <map>

#include "apiary/core/blocklog/entry.hpp"

namespace apiary::core::blocklog {

namespace {

constexpr std::array<std::uint8_t, 4> zstd_magic{0x28, 0xb5, 0x2f, 0xfd};
// Hive's dictionaries are about 220 KB once decompressed; a file that claims more is not one.
constexpr std::size_t max_dictionary_size = 1 << 20;
constexpr std::uintmax_t max_dictionary_file_size = 4 << 20;

std::string zstd_error(std::size_t code) { return ZSTD_getErrorName(code); }

struct cctx_free {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct dctx_free {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};
struct cdict_free {
  void operator()(ZSTD_CDict* c) const { ZSTD_freeCDict(c); }
};
struct ddict_free {
  void operator()(ZSTD_DDict* d) const { ZSTD_freeDDict(d); }
};

}  // namespace

std::string dictionary_file_name(std::uint8_t number) {
  std::string digits = std::to_string(number);
  digits.insert(0, 3 - digits.size(), '0');
  return digits + "M.dict.zst";
}

struct zstd_codec::impl {
  std::filesystem::path dir;
  int level;
  std::unique_ptr<ZSTD_CCtx, cctx_free> cctx{ZSTD_createCCtx()};
  std::unique_ptr<ZSTD_DCtx, dctx_free> dctx{ZSTD_createDCtx()};
  std::map<std::uint8_t, std::vector<std::uint8_t>> raw;  // decompressed dictionaries
  std::map<std::uint8_t, std::unique_ptr<ZSTD_CDict, cdict_free>> cdicts;
  std::map<std::uint8_t, std::unique_ptr<ZSTD_DDict, ddict_free>> ddicts;
  std::vector<std::uint8_t> framed;  // a stored frame with its magic number, reused

  // Dictionary `number`, read from its file and decompressed. Throws codec_error.
  const std::vector<std::uint8_t>& dictionary(std::uint8_t number) {
    if (auto it = raw.find(number); it != raw.end()) return it->second;
    const std::string name = dictionary_file_name(number);
    if (dir.empty())
      throw codec_error("compressed with dictionary " + std::to_string(number) + " (" + name +
                        "), and no dictionary directory was given");
    const std::filesystem::path file = dir / name;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
      throw codec_error("dictionary " + std::to_string(number) + " is missing: no regular file " + file.string());
    const std::uintmax_t size = std::filesystem::file_size(file, ec);
    if (ec || size > max_dictionary_file_size)
      throw codec_error("dictionary file " + file.string() + " cannot be used (" +
                        (ec ? ec.message() : std::to_string(size) + " bytes") + ")");
    std::vector<std::uint8_t> packed(static_cast<std::size_t>(size));
    std::ifstream in(file, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(packed.data()), static_cast<std::streamsize>(packed.size())))
      throw codec_error("dictionary file " + file.string() + " cannot be read");
    std::vector<std::uint8_t> out(max_dictionary_size);
    const std::size_t n = ZSTD_decompress(out.data(), out.size(), packed.data(), packed.size());
    if (ZSTD_isError(n))
      throw codec_error("dictionary file " + file.string() + " is no zstd file of a dictionary: " + zstd_error(n));
    out.resize(n);
    return raw.emplace(number, std::move(out)).first->second;
  }

  ZSTD_CDict* cdict(std::uint8_t number) {
    if (auto it = cdicts.find(number); it != cdicts.end()) return it->second.get();
    const auto& d = dictionary(number);
    std::unique_ptr<ZSTD_CDict, cdict_free> c(ZSTD_createCDict(d.data(), d.size(), level));
    if (!c) throw codec_error("dictionary " + std::to_string(number) + " cannot be loaded for compression");
    return cdicts.emplace(number, std::move(c)).first->second.get();
  }

  ZSTD_DDict* ddict(std::uint8_t number) {
    if (auto it = ddicts.find(number); it != ddicts.end()) return it->second.get();
    const auto& d = dictionary(number);
    std::unique_ptr<ZSTD_DDict, ddict_free> dd(ZSTD_createDDict(d.data(), d.size()));
    if (!dd) throw codec_error("dictionary " + std::to_string(number) + " cannot be loaded for decompression");
    return ddicts.emplace(number, std::move(dd)).first->second.get();
  }
};

zstd_codec::zstd_codec(std::filesystem::path dictionary_dir, int level) : impl_(std::make_unique<impl>()) {
  impl_->dir = std::move(dictionary_dir);
  impl_->level = level;
  if (!impl_->cctx || !impl_->dctx) throw codec_error("out of memory for zstd's contexts");
}

zstd_codec::~zstd_codec() = default;

std::vector<std::uint8_t> zstd_codec::compress(std::span<const std::uint8_t> block,
                                               std::optional<std::uint8_t> dictionary) {
  ZSTD_CCtx* c = impl_->cctx.get();
  ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
  // What Hive leaves out of a stored frame: the position word says the rest.
  for (const auto& [param, value] :
       {std::pair{ZSTD_c_compressionLevel, impl_->level}, std::pair{ZSTD_c_contentSizeFlag, 0},
        std::pair{ZSTD_c_dictIDFlag, 0}, std::pair{ZSTD_c_checksumFlag, 0}})
    if (const std::size_t r = ZSTD_CCtx_setParameter(c, param, value); ZSTD_isError(r))
      throw codec_error("zstd refused a parameter: " + zstd_error(r));
  if (dictionary)
    if (const std::size_t r = ZSTD_CCtx_refCDict(c, impl_->cdict(*dictionary)); ZSTD_isError(r))
      throw codec_error("zstd refused dictionary " + std::to_string(*dictionary) + ": " + zstd_error(r));
  std::vector<std::uint8_t> out(ZSTD_compressBound(block.size()));
  const std::size_t n = ZSTD_compress2(c, out.data(), out.size(), block.data(), block.size());
  if (ZSTD_isError(n)) throw codec_error("zstd could not compress the block: " + zstd_error(n));
  if (n < zstd_magic.size() || std::memcmp(out.data(), zstd_magic.data(), zstd_magic.size()) != 0)
    throw codec_error("zstd wrote a frame without its magic number");
  out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(zstd_magic.size()));
  out.resize(n - zstd_magic.size());
  return out;
}

std::vector<std::uint8_t> zstd_codec::decompress(std::span<const std::uint8_t> frame,
                                                 std::optional<std::uint8_t> dictionary) {
  ZSTD_DCtx* d = impl_->dctx.get();
  ZSTD_DCtx_reset(d, ZSTD_reset_session_and_parameters);
  if (dictionary)
    if (const std::size_t r = ZSTD_DCtx_refDDict(d, impl_->ddict(*dictionary)); ZSTD_isError(r))
      throw codec_error("zstd refused dictionary " + std::to_string(*dictionary) + ": " + zstd_error(r));
  std::vector<std::uint8_t>& framed = impl_->framed;
  framed.assign(zstd_magic.begin(), zstd_magic.end());
  framed.insert(framed.end(), frame.begin(), frame.end());
  std::vector<std::uint8_t> out(max_block_size);
  const std::size_t n = ZSTD_decompressDCtx(d, out.data(), out.size(), framed.data(), framed.size());
  if (ZSTD_isError(n)) {
    if (ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall)
      throw codec_error("bad zstd frame: it holds more than " + std::to_string(max_block_size) + " bytes");
    throw codec_error("bad zstd frame: " + zstd_error(n));
  }
  out.resize(n);
  out.shrink_to_fit();
  return out;
}

}  // namespace apiary::core::blocklog
