// Which response status codes get a counter of their own.
//
// `portico_requests_total{location,code}` wants exact codes, but an array of
// every code 100..599 would cost 4 KB per location per worker slot, mostly
// zeros. Instead each IANA-registered code (plus nginx's 499, which nginx
// users look for) has a counter, and anything else an upstream might send
// is counted under its class ("4xx"), or "other" outside 100..599. That is
// 70 counters (560 bytes), and the hot path maps a code with one table load.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace portico::metrics {

inline constexpr std::array<uint16_t, 64> registered_status_codes = {
    100, 101, 102, 103,                                                    //
    200, 201, 202, 203, 204, 205, 206, 207, 208, 226,                      //
    300, 301, 302, 303, 304, 305, 306, 307, 308,                           //
    400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413,  //
    414, 415, 416, 417, 418, 421, 422, 423, 424, 425, 426, 428, 429, 431,  //
    451, 499,                                                              //
    500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
};

// Counter layout: the registered codes in the order above, then one per
// class 1xx..5xx, then "other".
inline constexpr size_t first_class_status = registered_status_codes.size();
inline constexpr size_t other_status = first_class_status + 5;
inline constexpr size_t status_slot_count = other_status + 1;

inline constexpr auto status_slot_table = [] {
    std::array<uint8_t, 500> table{};  // codes 100..599
    for (size_t code = 100; code < 600; ++code)
        table[code - 100] = static_cast<uint8_t>(first_class_status + code / 100 - 1);
    for (size_t i = 0; i < registered_status_codes.size(); ++i)
        table[registered_status_codes[i] - 100] = static_cast<uint8_t>(i);
    return table;
}();

inline size_t status_slot(int code) {
    if (code < 100 || code > 599) return other_status;
    return status_slot_table[static_cast<size_t>(code - 100)];
}

// The `code` label of a slot: "404", "4xx" or "other".
std::string status_label(size_t slot);

// 1..5 for the class a slot belongs to, 0 for "other".
int status_class(size_t slot);

}  // namespace portico::metrics
