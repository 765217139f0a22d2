#include "http/request.hpp"

#include <llhttp.h>

#include <sys/random.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>

namespace portico::http {

bool Request::is_head() const { return method == HTTP_HEAD; }

std::string_view Request::header(std::string_view name) const {
    for (const HeaderField& field : headers)
        if (equals_ignore_case(field.name, name)) return field.value;
    return {};
}

namespace {

bool is_hex_digit(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// What each byte may be in a Host (RFC 3986 3.2.2): a reg-name character
// (unreserved, sub-delims), a '.', the '%' of a pct-encoding, the ':' before
// the port, or nothing valid. One table lookup a byte: every request's Host
// goes through it.
enum HostByte : uint8_t { invalid, name_byte, dot, percent, colon };

constexpr std::array<uint8_t, 256> host_bytes = [] {
    std::array<uint8_t, 256> table{};
    for (char c = 'a'; c <= 'z'; ++c) table[static_cast<unsigned char>(c)] = name_byte;
    for (char c = 'A'; c <= 'Z'; ++c) table[static_cast<unsigned char>(c)] = name_byte;
    for (char c = '0'; c <= '9'; ++c) table[static_cast<unsigned char>(c)] = name_byte;
    for (char c : std::string_view("-_~!$&'()*+,;="))
        table[static_cast<unsigned char>(c)] = name_byte;
    table['.'] = dot;
    table['%'] = percent;
    table[':'] = colon;
    return table;
}();

// ":" and at most five digits, or nothing.
bool is_valid_port_part(std::string_view rest) {
    if (rest.empty()) return true;
    if (rest.front() != ':' || rest.size() > 6) return false;
    for (char c : rest.substr(1))
        if (c < '0' || c > '9') return false;
    return true;
}

}  // namespace

bool is_valid_host(std::string_view host) {
    if (host.empty()) return true;
    if (host.front() == '[') {  // an IPv6 (or IPvFuture) literal
        size_t close = host.find(']');
        if (close == std::string_view::npos || close < 2) return false;
        for (char c : host.substr(1, close - 1))
            if (!is_hex_digit(c) && c != ':' && c != '.') return false;
        return is_valid_port_part(host.substr(close + 1));
    }
    size_t i = 0;
    for (; i < host.size(); ++i) {
        uint8_t kind = host_bytes[static_cast<unsigned char>(host[i])];
        if (kind == name_byte) [[likely]]
            continue;
        if (kind == dot) {
            // nginx refuses "..", as a path would climb.
            if (i > 0 && host[i - 1] == '.') return false;
        } else if (kind == percent) {
            if (i + 2 >= host.size() || !is_hex_digit(host[i + 1]) || !is_hex_digit(host[i + 2]))
                return false;
            i += 2;
        } else {
            break;  // the port's ':', or a byte no host has
        }
    }
    return i > 0 && is_valid_port_part(host.substr(i));
}

void Request::reset() {
    give_back_held();
    static_cast<RequestFields&>(*this) = RequestFields{};
    headers.clear();
    normalized_path.clear();
    rewritten_query.clear();
}

namespace {

// xoshiro256** seeded from the kernel once per worker thread: request ids
// must not collide, not be secret, and cost a few instructions.
struct IdGenerator {
    uint64_t state[4];
    IdGenerator() {
        if (::getrandom(state, sizeof state, 0) != sizeof state) {
            std::random_device device;
            for (uint64_t& word : state) word = (uint64_t{device()} << 32) | device();
        }
    }
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t next() {
        uint64_t result = rotl(state[1] * 5, 7) * 9;
        uint64_t t = state[1] << 17;
        state[2] ^= state[0];
        state[3] ^= state[1];
        state[1] ^= state[2];
        state[0] ^= state[3];
        state[2] ^= t;
        state[3] = rotl(state[3], 45);
        return result;
    }
};

// Eight bytes, each a value 0..15, as eight lowercase hex digits, all at
// once: +'0' everywhere, and +('a'-'0'-10) where the value is 10 or more.
uint64_t hex_digits(uint64_t nibbles) {
    constexpr uint64_t ones = 0x0101010101010101;
    uint64_t letters = ((nibbles + 6 * ones) >> 4) & ones;
    return nibbles + '0' * ones + letters * ('a' - '0' - 10);
}

}  // namespace

std::string_view request_id(const Request& request) {
    if (request.request_id.empty()) {
        static thread_local IdGenerator generator;
        // Each random bit shows once; which digit holds which nibble does
        // not matter for an id.
        constexpr uint64_t low_nibbles = 0x0F0F0F0F0F0F0F0F;
        char* out = request.request_id_text.text;
        for (int half = 0; half < 2; ++half, out += 16) {
            uint64_t bits = generator.next();
            uint64_t low = hex_digits(bits & low_nibbles);
            uint64_t high = hex_digits((bits >> 4) & low_nibbles);
            std::memcpy(out, &low, 8);
            std::memcpy(out + 8, &high, 8);
        }
        request.request_id = {request.request_id_text.text, sizeof request.request_id_text.text};
    }
    return request.request_id;
}

}  // namespace portico::http
