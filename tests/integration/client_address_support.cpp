#include "client_address_support.hpp"

#include <arpa/inet.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "harness.hpp"

namespace portico::test {

namespace {

bool is_ipv6(const std::string& address) {
    return address.find(':') != std::string::npos;
}

}  // namespace

std::string proxy_v1(const std::string& source, uint16_t port) {
    bool v6 = is_ipv6(source);
    return std::string("PROXY ") + (v6 ? "TCP6 " : "TCP4 ") + source +
           (v6 ? " ::1 " : " 127.0.0.1 ") + std::to_string(port) + " 80\r\n";
}

std::string proxy_v2(const std::string& source, uint16_t port) {
    bool v6 = is_ipv6(source);
    std::string header("\r\n\r\n\0\r\nQUIT\n", 12);
    header += '\x21';  // version 2, PROXY
    header += v6 ? '\x21' : '\x11';
    std::string block(v6 ? 36 : 12, '\0');
    size_t address_size = v6 ? 16 : 4;
    inet_pton(v6 ? AF_INET6 : AF_INET, source.c_str(), block.data());
    inet_pton(v6 ? AF_INET6 : AF_INET, v6 ? "::1" : "127.0.0.1", block.data() + address_size);
    block[2 * address_size] = static_cast<char>(port >> 8);
    block[2 * address_size + 1] = static_cast<char>(port & 0xff);
    block[2 * address_size + 3] = 80;
    header += static_cast<char>(0);
    header += static_cast<char>(block.size());
    return header + block;
}

std::string proxy_v2_local() {
    std::string header("\r\n\r\n\0\r\nQUIT\n", 12);
    header += '\x20';  // version 2, LOCAL
    header += std::string("\0\0\0", 3);
    return header;
}

std::vector<std::string> access_log_clients(const std::string& path, size_t count) {
    return access_log_values(path, "client", count);
}

std::vector<std::string> access_log_values(const std::string& path, const std::string& field,
                                           size_t count) {
    std::vector<std::string> clients;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (true) {
        clients.clear();
        std::istringstream lines(read_text(path));
        for (std::string line; std::getline(lines, line);) {
            const std::string key = "\"" + field + "\":\"";
            size_t at = line.find(key);
            if (at == std::string::npos) continue;
            at += key.size();
            clients.push_back(line.substr(at, line.find('"', at) - at));
        }
        if (clients.size() >= count || std::chrono::steady_clock::now() > deadline) return clients;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

}  // namespace portico::test
