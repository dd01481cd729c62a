// Validation of custom_json payloads with a real JSON parser (Boost.JSON's SAX parser with
// a handler that keeps nothing, so validating allocates nothing). Thread-safe.
#pragma once

#include <string_view>

namespace apiary::core {

// True when s is one complete, well-formed JSON text (RFC 8259), as Hive requires of
// custom_json's json field.
bool is_valid_json(std::string_view s);

}  // namespace apiary::core
