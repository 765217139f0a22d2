#include <fcntl.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "metrics/access_log.hpp"

using namespace portico::metrics;
using portico::config::AccessFormat;
using portico::config::LogConfig;

namespace {

constexpr time_t nov_29_2026_22h = 1795989600;  // 2026-11-29T22:00:00Z

// Time stamps are local time, as nginx's; pin the zone so they are known.
void use_utc() {
    setenv("TZ", "UTC", 1);
    tzset();
}

AccessRecord proxied_record() {
    return {.client_ip = "203.0.113.7",
            .time = nov_29_2026_22h,
            .method = "GET",
            .target = "/p",
            .version_minor = 1,
            .status = 200,
            .body_bytes = 123,
            .referer = "referer",
            .user_agent = "ua",
            .location = "assets",
            .worker = 0,
            .request_ns = 123'000,
            .proxied = true,
            .upstream_ns = 100'000,
            .connect_ns = 20'000,
            .upstream_server = "127.0.0.1:3000"};
}

AccessRecord static_record() {
    return {.client_ip = "::1",
            .time = nov_29_2026_22h,
            .method = "HEAD",
            .target = "/index.html",
            .version_minor = 0,
            .status = 304,
            .body_bytes = 0,
            .location = "-",
            .worker = 3,
            .request_ns = 45'600};
}

std::string line_of(const AccessRecord& record, AccessFormat format) {
    std::string line;
    format_access_line(line, record, format);
    return line;
}

// Splits a combined line into its fields: "..." and [...] are one field
// each (their contents kept verbatim, escapes and all), the rest splits on
// spaces.
std::vector<std::string> combined_fields(const std::string& line) {
    std::vector<std::string> fields;
    for (size_t i = 0; i < line.size();) {
        if (line[i] == ' ') {
            ++i;
            continue;
        }
        size_t end;
        if (line[i] == '"' || line[i] == '[') {
            char close = line[i] == '"' ? '"' : ']';
            end = line.find(close, i + 1);
            if (end == std::string::npos) return {};  // unterminated: not a line we wrote
            fields.push_back(line.substr(i + 1, end - i - 1));
            i = end + 1;
        } else {
            end = line.find(' ', i);
            if (end == std::string::npos) end = line.size();
            std::string field = line.substr(i, end - i);
            // loc="name": keep the name between the quotes.
            if (field.size() >= 5 && field.rfind("loc=\"", 0) == 0) {
                end = line.find('"', i + 5);
                if (end == std::string::npos) return {};
                field = "loc=" + line.substr(i + 5, end - i - 5);
                ++end;
            }
            fields.push_back(field);
            i = end;
        }
    }
    return fields;
}

struct LogDir {
    std::filesystem::path path;
    LogDir() {
        char name[] = "/tmp/portico-access-XXXXXX";
        REQUIRE(mkdtemp(name) != nullptr);
        path = name;
    }
    ~LogDir() { std::filesystem::remove_all(path); }
};

std::vector<std::string> read_lines(const std::filesystem::path& path) {
    std::vector<std::string> lines;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// Waits up to `seconds` for `path` to hold `count` lines.
std::vector<std::string> wait_for_lines(const std::filesystem::path& path, size_t count,
                                        double seconds) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::vector<std::string> lines = read_lines(path);
    while (lines.size() < count && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        lines = read_lines(path);
    }
    return lines;
}

LogConfig access_to(const std::string& where, AccessFormat format) {
    LogConfig log;
    log.access = where;
    log.access_format = format;
    return log;
}

AccessRecord numbered(int n, std::string& target) {
    target = "/item/" + std::to_string(n);
    AccessRecord record = static_record();
    record.target = target;
    return record;
}

}  // namespace

TEST_CASE("combined: nginx's fields, then the timings, location and worker", "[access-log]") {
    use_utc();
    std::string line = line_of(proxied_record(), AccessFormat::combined);
    CHECK(line ==
          "203.0.113.7 - - [29/Nov/2026:22:00:00 +0000] \"GET /p HTTP/1.1\" 200 123 "
          "\"referer\" \"ua\" rt=0.000123 urt=0.000100 uct=0.000020 loc=\"assets\" w=0 tls=- rid=- "
          "refused=-");

    std::vector<std::string> fields = combined_fields(line);
    REQUIRE(fields.size() == 17);
    CHECK(fields[0] == "203.0.113.7");
    CHECK(fields[3] == "29/Nov/2026:22:00:00 +0000");
    CHECK(fields[4] == "GET /p HTTP/1.1");
    CHECK(fields[5] == "200");
    CHECK(fields[6] == "123");
    CHECK(fields[7] == "referer");
    CHECK(fields[8] == "ua");
    CHECK(fields[9] == "rt=0.000123");
    CHECK(fields[12] == "loc=assets");
    CHECK(fields[13] == "w=0");
    CHECK(fields[14] == "tls=-");  // cleartext
    CHECK(fields[15] == "rid=-");  // no id given
}

TEST_CASE("combined and json: the request id, as sent upstream", "[access-log]") {
    use_utc();
    AccessRecord record = proxied_record();
    record.request_id = "0123456789abcdef0123456789abcdef";
    std::vector<std::string> fields = combined_fields(line_of(record, AccessFormat::combined));
    REQUIRE(fields.size() == 17);
    CHECK(fields[15] == "rid=0123456789abcdef0123456789abcdef");
    nlohmann::json json = nlohmann::json::parse(line_of(record, AccessFormat::json));
    CHECK(json["request_id"] == "0123456789abcdef0123456789abcdef");
    CHECK(nlohmann::json::parse(line_of(proxied_record(), AccessFormat::json))["request_id"]
              .is_null());
}

TEST_CASE("combined and json: the limit or access rule that refused the request", "[access-log]") {
    use_utc();
    AccessRecord record = proxied_record();
    record.refused_by = "per_ip";
    std::vector<std::string> fields = combined_fields(line_of(record, AccessFormat::combined));
    REQUIRE(fields.size() == 17);
    CHECK(fields[16] == "refused=per_ip");
    CHECK(combined_fields(line_of(proxied_record(), AccessFormat::combined))[16] == "refused=-");
    record.refused_by = "a\"b";  // a [limit."..."] may hold any character
    CHECK(combined_fields(line_of(record, AccessFormat::combined))[16] == "refused=a\\x22b");
    record.refused_by = "deny";
    CHECK(nlohmann::json::parse(line_of(record, AccessFormat::json))["refused"] == "deny");
    CHECK(
        nlohmann::json::parse(line_of(proxied_record(), AccessFormat::json))["refused"].is_null());
}

TEST_CASE("combined and json: the TLS protocol and cipher of a request over TLS",
          "[access-log]") {
    use_utc();
    AccessRecord record = proxied_record();
    record.tls_protocol = "TLSv1.3";
    record.tls_cipher = "TLS_AES_128_GCM_SHA256";
    std::string line = line_of(record, AccessFormat::combined);
    CHECK(line ==
          "203.0.113.7 - - [29/Nov/2026:22:00:00 +0000] \"GET /p HTTP/1.1\" 200 123 "
          "\"referer\" \"ua\" rt=0.000123 urt=0.000100 uct=0.000020 loc=\"assets\" w=0 "
          "tls=TLSv1.3/TLS_AES_128_GCM_SHA256 rid=- refused=-");
    std::vector<std::string> fields = combined_fields(line);
    REQUIRE(fields.size() == 17);
    CHECK(fields[14] == "tls=TLSv1.3/TLS_AES_128_GCM_SHA256");

    nlohmann::json json = nlohmann::json::parse(line_of(record, AccessFormat::json));
    CHECK(json["tls_protocol"] == "TLSv1.3");
    CHECK(json["tls_cipher"] == "TLS_AES_128_GCM_SHA256");
    CHECK(json.size() == 19);

    // Escaped like the quoted fields, though OpenSSL's names need none.
    record.tls_protocol = "TLSv\"9\"";
    record.tls_cipher = "";
    fields = combined_fields(line_of(record, AccessFormat::combined));
    REQUIRE(fields.size() == 17);
    CHECK(fields[14] == "tls=TLSv\\x229\\x22/-");
}

TEST_CASE("combined: '-' for what a request did not have", "[access-log]") {
    use_utc();
    std::vector<std::string> fields =
        combined_fields(line_of(static_record(), AccessFormat::combined));
    REQUIRE(fields.size() == 17);
    CHECK(fields[0] == "::1");
    CHECK(fields[4] == "HEAD /index.html HTTP/1.0");
    CHECK(fields[5] == "304");
    CHECK(fields[6] == "0");
    CHECK(fields[7] == "-");            // no Referer
    CHECK(fields[8] == "-");            // no User-Agent
    CHECK(fields[9] == "rt=0.000046");  // rounded to the microsecond
    CHECK(fields[10] == "urt=-");       // not proxied
    CHECK(fields[11] == "uct=-");
    CHECK(fields[12] == "loc=-");
    CHECK(fields[13] == "w=3");
    CHECK(fields[14] == "tls=-");

    AccessRecord reused = proxied_record();
    reused.connect_ns = 0;  // a pooled connection: no connect happened
    fields = combined_fields(line_of(reused, AccessFormat::combined));
    CHECK(fields[10] == "urt=0.000100");
    CHECK(fields[11] == "uct=-");

    AccessRecord no_request = static_record();  // e.g. a 400 on a garbled head
    no_request.method = "";
    no_request.target = "";
    no_request.status = 400;
    fields = combined_fields(line_of(no_request, AccessFormat::combined));
    CHECK(fields[4] == "-");
}

TEST_CASE("combined: quoted fields escape as nginx does", "[access-log]") {
    use_utc();
    AccessRecord record = proxied_record();
    record.target = "/a\"b c";
    record.user_agent = "say \"hi\" \\ \n\x1b[31m caf\xc3\xa9";
    record.referer = "\x7f";
    record.location = "we\"ird";
    std::string line = line_of(record, AccessFormat::combined);
    CHECK(line.find("\"GET /a\\x22b c HTTP/1.1\"") != std::string::npos);
    CHECK(line.find("\"say \\x22hi\\x22 \\x5C \\x0A\\x1B[31m caf\\xC3\\xA9\"") !=
          std::string::npos);
    CHECK(line.find("\"\\x7F\"") != std::string::npos);
    CHECK(line.find("loc=\"we\\x22ird\"") != std::string::npos);
    for (char c : line) CHECK((c >= 0x20 && c < 0x7f));
}

TEST_CASE("json: one object per line with the same fields, null where there is none",
          "[access-log]") {
    use_utc();
    std::string line = line_of(proxied_record(), AccessFormat::json);
    CHECK(line.find('\n') == std::string::npos);
    nlohmann::json json = nlohmann::json::parse(line);
    CHECK(json["time"] == "2026-11-29T22:00:00+00:00");
    CHECK(json["client"] == "203.0.113.7");
    CHECK(json["method"] == "GET");
    CHECK(json["target"] == "/p");
    CHECK(json["protocol"] == "HTTP/1.1");
    CHECK(json["status"] == 200);
    CHECK(json["bytes"] == 123);
    CHECK(json["referer"] == "referer");
    CHECK(json["user_agent"] == "ua");
    CHECK(json["location"] == "assets");
    CHECK(json["worker"] == 0);
    CHECK(json["rt"].get<double>() == Approx(0.000123));
    CHECK(json["urt"].get<double>() == Approx(0.0001));
    CHECK(json["uct"].get<double>() == Approx(0.00002));
    CHECK(json["upstream"] == "127.0.0.1:3000");
    CHECK(json["tls_protocol"].is_null());  // cleartext
    CHECK(json["tls_cipher"].is_null());
    CHECK(json.size() == 19);

    json = nlohmann::json::parse(line_of(static_record(), AccessFormat::json));
    CHECK(json["protocol"] == "HTTP/1.0");
    CHECK(json["referer"].is_null());
    CHECK(json["user_agent"].is_null());
    CHECK(json["location"].is_null());
    CHECK(json["urt"].is_null());
    CHECK(json["uct"].is_null());
    CHECK(json["upstream"].is_null());
    CHECK(json["worker"] == 3);
    CHECK(json["rt"].get<double>() == Approx(0.000046));
}

TEST_CASE("json: strings round-trip, stray bytes still parse", "[access-log]") {
    AccessRecord record = proxied_record();
    std::string agent = "say \"hi\" \\ \n\t\x1b caf\xc3\xa9 \xf0\x9f\x98\x80";
    record.user_agent = agent;
    record.target = "/bad\xff\xc3(";  // not UTF-8: 0xff, and 0xc3 without its continuation
    record.request_ns = 1'234'567'891;
    nlohmann::json json = nlohmann::json::parse(line_of(record, AccessFormat::json));
    CHECK(json["user_agent"] == agent);
    CHECK(json["target"] == "/bad\xc3\xbf\xc3\x83(");  // the bytes as U+00FF, U+00C3
    CHECK(json["rt"].get<double>() == Approx(1.234568));
}

TEST_CASE("an access log that is off does nothing", "[access-log]") {
    AccessLog log(LogConfig{});
    CHECK_FALSE(log.enabled());
    log.log(proxied_record());
    log.reopen();
    CHECK(log.dropped_lines() == 0);
}

TEST_CASE("lines reach the file within about a second, whole", "[access-log]") {
    use_utc();
    LogDir dir;
    auto path = dir.path / "access.log";
    AccessLog log(access_to(path.string(), AccessFormat::json));
    REQUIRE(log.enabled());
    std::string target;
    for (int n = 0; n < 3; ++n) log.log(numbered(n, target));
    std::vector<std::string> lines = wait_for_lines(path, 3, 2.5);
    REQUIRE(lines.size() == 3);
    for (int n = 0; n < 3; ++n)
        CHECK(nlohmann::json::parse(lines[n])["target"] == "/item/" + std::to_string(n));
}

TEST_CASE("reopen after logrotate moved the file starts a new one", "[access-log]") {
    use_utc();
    LogDir dir;
    auto path = dir.path / "access.log";
    auto rotated = dir.path / "access.log.1";
    std::string target;
    {
        AccessLog log(access_to(path.string(), AccessFormat::combined));
        for (int n = 0; n < 5; ++n) log.log(numbered(n, target));
        REQUIRE(wait_for_lines(path, 5, 2.5).size() == 5);
        std::filesystem::rename(path, rotated);
        for (int n = 5; n < 7; ++n) log.log(numbered(n, target));  // still the old file
        log.reopen();
        CHECK(log.enabled());
        for (int n = 7; n < 10; ++n) log.log(numbered(n, target));
        std::vector<std::string> fresh = wait_for_lines(path, 3, 2.5);
        REQUIRE(fresh.size() == 3);
        CHECK(combined_fields(fresh[0])[4] == "HEAD /item/7 HTTP/1.0");
    }
    std::vector<std::string> old = read_lines(rotated);
    REQUIRE(old.size() == 7);
    CHECK(combined_fields(old[6])[4] == "HEAD /item/6 HTTP/1.0");
    CHECK(read_lines(path).size() == 3);
}

TEST_CASE("a burst beyond the queue drops old lines, never blocks, never tears one",
          "[access-log]") {
    LogDir dir;
    auto path = dir.path / "access.log";
    constexpr int burst = 50'000;
    uint64_t dropped = 0;
    {
        AccessLog log(access_to(path.string(), AccessFormat::combined));
        std::string target;
        for (int n = 0; n < burst; ++n) log.log(numbered(n, target));
        dropped = log.dropped_lines();
    }  // destruction writes what is still queued
    std::vector<std::string> lines = read_lines(path);
    // Every line is either written or counted as dropped (give or take the
    // once-a-second flush requests, which share the queue and its count).
    CHECK(lines.size() <= burst);
    CHECK(lines.size() + dropped + 2 >= burst);
    CHECK(dropped <= burst);
    INFO("dropped " << dropped);
    // What survives is whole lines, oldest dropped first: targets only go up.
    int torn = 0, out_of_order = 0, previous = -1;
    for (const std::string& line : lines) {
        std::vector<std::string> fields = combined_fields(line);
        if (fields.size() != 17 || fields[13] != "w=3") {
            ++torn;
            continue;
        }
        int n = std::stoi(fields[4].substr(std::string("HEAD /item/").size()));
        if (n <= previous) ++out_of_order;
        previous = n;
    }
    CHECK(torn == 0);
    CHECK(out_of_order == 0);
}

TEST_CASE("a stalled writer: log() does not wait, the oldest queued lines go", "[access-log]") {
    LogDir dir;
    auto path = dir.path / "fifo";
    REQUIRE(mkfifo(path.c_str(), 0600) == 0);
    // A reader that reads nothing yet: once the pipe's 64 KiB are full the
    // writer thread blocks in write(2), as it would on a stuck disk.
    int reader = open(path.c_str(), O_RDONLY | O_NONBLOCK);
    REQUIRE(reader >= 0);
    auto log = std::make_unique<AccessLog>(access_to(path.string(), AccessFormat::combined));
    constexpr int burst = 50'000;
    std::string target;
    auto start = std::chrono::steady_clock::now();
    for (int n = 0; n < burst; ++n) log->log(numbered(n, target));
    auto elapsed = std::chrono::steady_clock::now() - start;
    CHECK(elapsed < std::chrono::seconds(2));  // ~20 ms; a blocking queue would hang here
    uint64_t dropped = log->dropped_lines();
    CHECK(dropped > 0);

    std::string received;
    std::thread drain([&] {
        fcntl(reader, F_SETFL, 0);
        char buffer[65536];
        for (ssize_t n; (n = read(reader, buffer, sizeof buffer)) > 0;) received.append(buffer, n);
    });
    // The loss is told on the error log when the log closes.
    auto said = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
    auto previous_logger = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", said));
    log.reset();  // writes what is queued, then closes the pipe: the reader sees EOF
    spdlog::set_default_logger(previous_logger);
    drain.join();
    close(reader);
    std::vector<std::string> messages = said->last_formatted();
    REQUIRE(messages.size() == 1);
    size_t count_end = messages[0].find(" lines lost");
    REQUIRE(count_end != std::string::npos);
    size_t count_start = messages[0].rfind(' ', count_end - 1) + 1;
    uint64_t told = std::stoull(messages[0].substr(count_start, count_end - count_start));
    // As counted before the close, give or take a flush request dropped since.
    CHECK(told >= dropped);
    CHECK(told <= dropped + 2);

    std::istringstream in(received);
    int lines = 0, torn = 0, out_of_order = 0, previous = -1;
    for (std::string line; std::getline(in, line); ++lines) {
        std::vector<std::string> fields = combined_fields(line);
        if (fields.size() != 17) {
            ++torn;
            continue;
        }
        int n = std::stoi(fields[4].substr(std::string("HEAD /item/").size()));
        if (n <= previous) ++out_of_order;
        previous = n;
    }
    INFO("dropped " << dropped << ", received " << lines);
    CHECK(torn == 0);
    CHECK(out_of_order == 0);
    CHECK(lines < burst);
    // Each line was written or counted (give or take a once-a-second flush
    // request, which shares the queue and its count).
    CHECK(lines + dropped + 2 >= burst);
    CHECK(lines + dropped <= burst + 2);
    CHECK(previous == burst - 1);  // the newest line made it
}

TEST_CASE("stdout: lines go to file descriptor 1", "[access-log]") {
    LogDir dir;
    auto path = dir.path / "stdout";
    std::fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    REQUIRE(saved >= 0);
    FILE* capture = std::fopen(path.c_str(), "w");
    REQUIRE(capture != nullptr);
    dup2(fileno(capture), STDOUT_FILENO);
    {
        AccessLog log(access_to("stdout", AccessFormat::json));
        std::string target;
        log.log(numbered(1, target));
        log.reopen();  // nothing to reopen: stays on stdout
        log.log(numbered(2, target));
    }
    dup2(saved, STDOUT_FILENO);
    close(saved);
    std::fclose(capture);
    std::vector<std::string> lines = read_lines(path);
    REQUIRE(lines.size() == 2);
    CHECK(nlohmann::json::parse(lines[1])["target"] == "/item/2");
}

TEST_CASE("a path that cannot be opened leaves the log disabled", "[access-log]") {
    auto level = spdlog::default_logger()->level();
    spdlog::set_level(spdlog::level::off);  // the expected complaint
    AccessLog log(access_to("/nonexistent-portico-dir/access.log", AccessFormat::combined));
    CHECK_FALSE(log.enabled());
    log.log(proxied_record());
    log.reopen();
    CHECK_FALSE(log.enabled());
    spdlog::set_level(level);
}
