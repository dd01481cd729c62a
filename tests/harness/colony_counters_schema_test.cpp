// The colony's counters (colony_counters.hpp) against harness/report.schema.json: each
// counter the report prints is in the schema's colony (the run's totals) or
// colony.per_thread (each thread's), under its report key and with the table's description
// word for word; and the schema has no key of a counter where the report does not print it.
// The end-to-end tests check the report against the schema; this keeps the schema's words
// those of the table.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include <boost/json.hpp>

#include "apiary/colony/colony_stats.hpp"

namespace apiary::colony {
namespace {

namespace json = boost::json;

json::object load_schema() {
  std::ifstream in(APIARY_REPORT_SCHEMA);
  EXPECT_TRUE(in) << APIARY_REPORT_SCHEMA;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return json::parse(text).as_object();
}

// The properties of the run's totals (colony) and of one thread (colony.per_thread's items).
struct colony_schema {
  json::object schema = load_schema();
  const json::object& total = schema.at("properties").at("colony").at("properties").as_object();
  const json::object& thread = total.at("per_thread").at("items").at("properties").as_object();
};

void expect_described(const json::object& properties, const colony_counter_info& c, std::string_view where) {
  const std::string key = c.report_key();
  const json::value* p = properties.if_contains(key);
  ASSERT_NE(p, nullptr) << where << " has no " << key;
  const json::value* description = p->as_object().if_contains("description");
  ASSERT_NE(description, nullptr) << where << "." << key << " has no description";
  EXPECT_EQ(std::string_view(description->as_string()), c.description) << where << "." << key;
}

TEST(ColonyCountersSchema, EveryCounterIsDescribedWhereTheReportPrintsIt) {
  const colony_schema s;
  for (const colony_counter_info& c : colony_counters) {
    if (c.in_total()) expect_described(s.total, c, "colony");
    if (c.per_thread()) expect_described(s.thread, c, "colony.per_thread");
  }
}

TEST(ColonyCountersSchema, NoCounterIsInTheSchemaWhereTheReportLeavesItOut) {
  const colony_schema s;
  for (const colony_counter_info& c : colony_counters) {
    const std::string key = c.report_key();
    EXPECT_EQ(s.total.contains(key), c.in_total()) << "colony." << key;
    EXPECT_EQ(s.thread.contains(key), c.per_thread()) << "colony.per_thread." << key;
  }
}

TEST(ColonyCountersSchema, KeysAreUnique) {
  for (std::size_t a = 0; a < colony_counter_count; ++a)
    for (std::size_t b = a + 1; b < colony_counter_count; ++b)
      EXPECT_NE(colony_counters[a].report_key(), colony_counters[b].report_key());
}

}  // namespace
}  // namespace apiary::colony
