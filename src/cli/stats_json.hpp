// Reading the metrics listener's JSON forgivingly: the document may come
// from an older or newer portico, so a missing or odd field reads as 0 (or
// empty) instead of aborting the whole table.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace portico::cli {

// object[key], or null when there is no such member (or no object).
const nlohmann::json& member(const nlohmann::json& object, const char* key);

// A non-negative integer: negative, fractional or non-numbers read as 0.
uint64_t count_of(const nlohmann::json& value);
uint64_t count_at(const nlohmann::json& object, const char* key);

double number_at(const nlohmann::json& object, const char* key);
std::string text_at(const nlohmann::json& object, const char* key);

}  // namespace portico::cli
