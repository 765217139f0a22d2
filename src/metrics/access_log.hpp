// The access log: one line per request, nginx's combined format plus the
// timings of the counters (rt=, urt=, uct=), or one JSON object per line.
//
// The event loop only formats the line and queues it: spdlog's async logger
// hands it to a thread of its own that does the writing, so a slow or full
// disk never stalls a request. Lines reach the file in whole-line writes
// (O_APPEND), so workers sharing one file never interleave mid-line, and at
// least once a second, so `tail -f` keeps up.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "config/config.hpp"

namespace spdlog {
class async_logger;
namespace details {
class thread_pool;
class periodic_worker;
}  // namespace details
}  // namespace spdlog

namespace portico::metrics {

// Views into the request; they only need to live through AccessLog::log().
// Every member has a default, so designated initializers may leave any out.
struct AccessRecord {
    std::string_view client_ip{};
    time_t time = 0;  // request start, wall clock
    std::string_view method{};
    std::string_view target{};
    int version_major = 1;
    int version_minor = 1;
    int status = 0;
    uint64_t body_bytes = 0;
    std::string_view referer{};     // "" when the request had none
    std::string_view user_agent{};  // likewise
    std::string_view location{};    // its name, "-" if none matched
    unsigned worker = 0;
    uint64_t request_ns = 0;
    bool proxied = false;
    uint64_t upstream_ns = 0;
    uint64_t connect_ns = 0;             // 0 = a reused connection (or not proxied)
    std::string_view upstream_server{};  // "" if not proxied
    std::string_view tls_protocol{};     // "TLSv1.3"; "" over cleartext
    std::string_view tls_cipher{};       // "TLS_AES_128_GCM_SHA256"; "" over cleartext
    std::string_view request_id{};       // $request_id, as sent upstream in X-Request-ID
    std::string_view cache_result{};     // the response cache's result; "" without a cache
    std::string_view refused_by{};       // the limit or access rule that refused it; "" if none
};

// Appends one line, without the trailing newline.
//
// combined: IP - - [29/Nov/2026:22:00:00 +0000] "GET /p HTTP/1.1" 200 123
//           "referer" "ua" rt=0.000123 urt=0.000100 uct=0.000020 loc="assets" w=0
//           tls=TLSv1.3/TLS_AES_128_GCM_SHA256 rid=0123456789abcdef0123456789abcdef
//           refused=per_ip
//   Local time, as nginx. Quoted fields escape '"', '\', control bytes and
//   bytes >= 0x7f as \xHH, as nginx does, so a line is always one line of
//   ASCII. Missing referer, user agent or request line print as "-"; urt and
//   uct print "-" when there is no such time, tls "-" over cleartext, rid "-"
//   without an id, refused "-" when nothing refused the request (else the
//   [limit.NAME], "max_concurrent", "deny" or "auth" that did).
// json: {"time":"2026-11-29T22:00:00+00:00","client":..,"method":..,"target":..,
//        "protocol":"HTTP/1.1","status":200,"bytes":123,"referer":..,
//        "user_agent":..,"location":..,"worker":0,"rt":0.000123,"urt":..,
//        "uct":..,"upstream":..,"tls_protocol":"TLSv1.3",
//        "tls_cipher":"TLS_AES_128_GCM_SHA256","request_id":"0123...",
//        "refused":"per_ip"}
//   Times in seconds with microsecond precision; null where combined prints
//   "-" (absent referer, user agent, location, urt, uct, upstream, refused;
//   both tls fields over cleartext). Invalid UTF-8 bytes are written as \u00XX so
//   every line parses.
void format_access_line(std::string& out, const AccessRecord& record, config::AccessFormat format);

// One per worker process, created after fork() (its writer thread must be
// born in the process that uses it). log() and reopen() are for the event
// loop thread only.
class AccessLog {
public:
    // `access = "off"` leaves it disabled. A file that cannot be opened is
    // reported on the error log and leaves it disabled until a reopen()
    // succeeds.
    explicit AccessLog(const config::LogConfig& log);
    ~AccessLog();
    AccessLog(const AccessLog&) = delete;
    AccessLog& operator=(const AccessLog&) = delete;

    // False when lines would go nowhere: callers can skip building records.
    bool enabled() const { return logger_ != nullptr; }

    // Formats into a reused buffer and queues the line. Never waits: when the
    // queue is full (the disk has stalled for thousands of lines) the oldest
    // queued lines are dropped, counted in dropped_lines().
    void log(const AccessRecord& record);

    // SIGUSR1 (logrotate): opens the configured path afresh, so a moved file
    // is let go and a new one created. Lines queued before the call still go
    // to the old file. If the path cannot be opened, keeps the old file.
    void reopen();

    // Lines lost to a full queue since this log was created.
    uint64_t dropped_lines() const;

private:
    std::shared_ptr<spdlog::async_logger> open_logger();
    // Lines dropped since the last report, on the error log: at each reopen
    // and when the log closes, so a loss is never silent.
    void report_dropped_lines();
    void flush_now();

    config::LogConfig config_;
    std::string line_;
    std::shared_ptr<spdlog::details::thread_pool> pool_;
    // Swapped by reopen() on the loop thread and read by the flusher thread:
    // the mutex guards only that exchange; log() (same thread as reopen)
    // reads it without one.
    std::shared_ptr<spdlog::async_logger> logger_;
    std::mutex logger_mutex_;
    uint64_t reported_drops_ = 0;
    std::unique_ptr<spdlog::details::periodic_worker> flusher_;
};

}  // namespace portico::metrics
