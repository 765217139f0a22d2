#include "metrics_support.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>

#include "upstream_server.hpp"

namespace portico::test {

uint16_t metrics_port(const Portico& portico) {
    std::string log = portico.log();
    std::string marker = "metrics on 127.0.0.1:0 (port ";
    size_t at = log.find(marker);
    REQUIRE(at != std::string::npos);
    return static_cast<uint16_t>(std::stoi(log.substr(at + marker.size())));
}

std::string scrape(uint16_t port, const std::string& path) {
    auto response = fetch(port, path);
    REQUIRE(response);
    REQUIRE(response->status == 200);
    return response->body;
}

double sample(const std::string& text, const std::string& series) {
    size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::strtod(text.c_str() + at + series.size() + 2, nullptr);
}

std::string scrape_when(uint16_t port, const std::string& series, double expected) {
    std::string text;
    UpstreamServer::wait_until([&] {
        text = scrape(port);
        return sample(text, series) == expected;
    }, 2s);
    return text;
}

}  // namespace portico::test
