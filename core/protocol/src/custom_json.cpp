#include "apiary/core/protocol/custom_json.hpp"

#include <boost/json/basic_parser_impl.hpp>

namespace apiary::core {

namespace {

// A SAX handler that accepts every event and keeps nothing: the parser alone decides
// whether the text is well formed.
struct null_handler {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  bool on_document_begin(boost::json::error_code&) { return true; }
  bool on_document_end(boost::json::error_code&) { return true; }
  bool on_object_begin(boost::json::error_code&) { return true; }
  bool on_object_end(std::size_t, boost::json::error_code&) { return true; }
  bool on_array_begin(boost::json::error_code&) { return true; }
  bool on_array_end(std::size_t, boost::json::error_code&) { return true; }
  bool on_key_part(boost::json::string_view, std::size_t, boost::json::error_code&) { return true; }
  bool on_key(boost::json::string_view, std::size_t, boost::json::error_code&) { return true; }
  bool on_string_part(boost::json::string_view, std::size_t, boost::json::error_code&) { return true; }
  bool on_string(boost::json::string_view, std::size_t, boost::json::error_code&) { return true; }
  bool on_number_part(boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_int64(std::int64_t, boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_uint64(std::uint64_t, boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_double(double, boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_bool(bool, boost::json::error_code&) { return true; }
  bool on_null(boost::json::error_code&) { return true; }
  bool on_comment_part(boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_comment(boost::json::string_view, boost::json::error_code&) { return true; }
};

}  // namespace

bool is_valid_json(std::string_view s) {
  // Strict RFC 8259: no comments, no trailing commas, no invalid UTF-8.
  boost::json::parse_options opts;
  opts.max_depth = 64;
  boost::json::basic_parser<null_handler> parser(opts);
  boost::json::error_code ec;
  std::size_t n = parser.write_some(false, s.data(), s.size(), ec);
  return !ec && n == s.size() && parser.done();
}

}  // namespace apiary::core
