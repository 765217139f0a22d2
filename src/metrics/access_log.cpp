#include "metrics/access_log.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/async_logger.h>
#include <spdlog/details/periodic_worker.h>
#include <spdlog/details/thread_pool.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "core/log.hpp"

namespace portico::metrics {

namespace {

// ---- formatting ------------------------------------------------------------

void append_number(std::string& out, uint64_t value) {
    char digits[24];
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
    (void)ec;  // 24 digits always fit a uint64_t
    out.append(digits, end);
}

// Nanoseconds as seconds with six decimals, rounded to the microsecond
// (nginx's $request_time has three; six keep sub-millisecond proxy costs).
void append_seconds(std::string& out, uint64_t ns) {
    uint64_t us = ns / 1000 + (ns % 1000 >= 500 ? 1 : 0);
    append_number(out, us / 1'000'000);
    out += '.';
    char fraction[8];
    uint64_t rest = us % 1'000'000;
    for (int i = 5; i >= 0; --i, rest /= 10) fraction[i] = static_cast<char>('0' + rest % 10);
    out.append(fraction, 6);
}

void append_hex_escape(std::string& out, const char* prefix, unsigned char c) {
    static constexpr char hex[] = "0123456789ABCDEF";
    out += prefix;
    out += hex[c >> 4];
    out += hex[c & 0xf];
}

// nginx's default log escaping: '"', '\', control bytes and everything from
// 0x7f up become \xHH, so a hostile header can neither end the field nor the
// line, nor smuggle terminal escapes into `tail -f`.
void append_escaped(std::string& out, std::string_view text) {
    for (char ch : text) {
        auto c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f)
            append_hex_escape(out, "\\x", c);
        else
            out += ch;
    }
}

void append_quoted_or_dash(std::string& out, std::string_view text) {
    out += '"';
    if (text.empty())
        out += '-';
    else
        append_escaped(out, text);
    out += '"';
}

// Length of the valid UTF-8 sequence starting at text[i], or 0 if the bytes
// there are not one (overlong forms and surrogates included).
size_t utf8_sequence_length(std::string_view text, size_t i) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
    unsigned char lead = byte(0);
    size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (lead < 0xc2 || lead > 0xf4 || i + length > text.size()) return 0;
    unsigned char low = 0x80, high = 0xbf;  // allowed range of the second byte
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
    if (byte(1) < low || byte(1) > high) return 0;
    for (size_t k = 2; k < length; ++k)
        if (byte(k) < 0x80 || byte(k) > 0xbf) return 0;
    return length;
}

// A JSON string. Valid UTF-8 passes through; a stray byte is written as the
// code point of the same value (\u00XX) so the line still parses.
void append_json_string(std::string& out, std::string_view text) {
    out += '"';
    for (size_t i = 0; i < text.size();) {
        auto c = static_cast<unsigned char>(text[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += text[i++];
        } else if (c < 0x20 || c == 0x7f) {
            append_hex_escape(out, "\\u00", c);
            ++i;
        } else if (c < 0x80) {
            out += text[i++];
        } else if (size_t length = utf8_sequence_length(text, i)) {
            out.append(text.substr(i, length));
            i += length;
        } else {
            append_hex_escape(out, "\\u00", c);
            ++i;
        }
    }
    out += '"';
}

void append_json_string_or_null(std::string& out, std::string_view text) {
    if (text.empty())
        out += "null";
    else
        append_json_string(out, text);
}

// Both time stamps of a second, worked out once per second per thread:
// localtime_r takes a lock inside glibc and strftime is not free.
struct TimeTexts {
    time_t second = -1;
    std::string local;  // 29/Nov/2026:22:00:00 +0000
    std::string iso;    // 2026-11-29T22:00:00+00:00
};

const TimeTexts& time_texts(time_t when) {
    thread_local TimeTexts texts;
    if (texts.second == when) return texts;
    static constexpr const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    tm local{};
    localtime_r(&when, &local);
    long offset_minutes = local.tm_gmtoff / 60;
    char sign = offset_minutes < 0 ? '-' : '+';
    if (offset_minutes < 0) offset_minutes = -offset_minutes;
    int hours = static_cast<int>(offset_minutes / 60),
        minutes = static_cast<int>(offset_minutes % 60);
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%02d/%s/%04d:%02d:%02d:%02d %c%02d%02d", local.tm_mday,
                  months[local.tm_mon % 12], local.tm_year + 1900, local.tm_hour, local.tm_min,
                  local.tm_sec, sign, hours, minutes);
    texts.local = buffer;
    std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d",
                  local.tm_year + 1900, local.tm_mon + 1, local.tm_mday, local.tm_hour,
                  local.tm_min, local.tm_sec, sign, hours, minutes);
    texts.iso = buffer;
    texts.second = when;
    return texts;
}

void format_combined(std::string& out, const AccessRecord& r) {
    out += r.client_ip.empty() ? std::string_view("-") : r.client_ip;
    out += " - - [";
    out += time_texts(r.time).local;
    out += "] \"";
    if (r.method.empty()) {
        out += '-';  // no request line was parsed (a 400 or 408 on the head)
    } else {
        append_escaped(out, r.method);
        out += ' ';
        append_escaped(out, r.target);
        out += " HTTP/";
        append_number(out, static_cast<uint64_t>(r.version_major));
        out += '.';
        append_number(out, static_cast<uint64_t>(r.version_minor));
    }
    out += "\" ";
    append_number(out, static_cast<uint64_t>(r.status));
    out += ' ';
    append_number(out, r.body_bytes);
    out += ' ';
    append_quoted_or_dash(out, r.referer);
    out += ' ';
    append_quoted_or_dash(out, r.user_agent);
    out += " rt=";
    append_seconds(out, r.request_ns);
    out += " urt=";
    if (r.proxied)
        append_seconds(out, r.upstream_ns);
    else
        out += '-';
    out += " uct=";
    if (r.proxied && r.connect_ns != 0)
        append_seconds(out, r.connect_ns);
    else
        out += '-';
    out += " loc=";
    append_quoted_or_dash(out, r.location);
    out += " w=";
    append_number(out, r.worker);
    // Always present, as urt= and uct= are, so a line splits into the same
    // fields over TLS and cleartext. The names are OpenSSL's (letters,
    // digits, '.', '_', '-', no space), escaped like the quoted fields all
    // the same.
    out += " tls=";
    if (r.tls_protocol.empty()) {
        out += '-';
    } else {
        append_escaped(out, r.tls_protocol);
        out += '/';
        append_escaped(out, r.tls_cipher.empty() ? std::string_view("-") : r.tls_cipher);
    }
    out += " rid=";
    append_escaped(out, r.request_id.empty() ? std::string_view("-") : r.request_id);
    // Config names (a [limit.NAME] may hold any character): escaped.
    out += " refused=";
    append_escaped(out, r.refused_by.empty() ? std::string_view("-") : r.refused_by);
    if (!r.cache_result.empty()) {
        out += " cache=";
        out += r.cache_result;
    }
}

void format_json(std::string& out, const AccessRecord& r) {
    bool has_request = !r.method.empty();
    out += "{\"time\":\"";
    out += time_texts(r.time).iso;
    out += "\",\"client\":";
    append_json_string_or_null(out, r.client_ip);
    out += ",\"method\":";
    append_json_string_or_null(out, r.method);
    out += ",\"target\":";
    append_json_string_or_null(out, has_request ? r.target : std::string_view());
    out += ",\"protocol\":";
    if (has_request) {
        out += "\"HTTP/";
        append_number(out, static_cast<uint64_t>(r.version_major));
        out += '.';
        append_number(out, static_cast<uint64_t>(r.version_minor));
        out += '"';
    } else {
        out += "null";
    }
    out += ",\"status\":";
    append_number(out, static_cast<uint64_t>(r.status));
    out += ",\"bytes\":";
    append_number(out, r.body_bytes);
    out += ",\"referer\":";
    append_json_string_or_null(out, r.referer);
    out += ",\"user_agent\":";
    append_json_string_or_null(out, r.user_agent);
    out += ",\"location\":";
    append_json_string_or_null(out, r.location == "-" ? std::string_view() : r.location);
    out += ",\"worker\":";
    append_number(out, r.worker);
    out += ",\"rt\":";
    append_seconds(out, r.request_ns);
    out += ",\"urt\":";
    if (r.proxied)
        append_seconds(out, r.upstream_ns);
    else
        out += "null";
    out += ",\"uct\":";
    if (r.proxied && r.connect_ns != 0)
        append_seconds(out, r.connect_ns);
    else
        out += "null";
    out += ",\"upstream\":";
    append_json_string_or_null(out, r.proxied ? r.upstream_server : std::string_view());
    out += ",\"tls_protocol\":";
    append_json_string_or_null(out, r.tls_protocol);
    out += ",\"tls_cipher\":";
    append_json_string_or_null(out, r.tls_protocol.empty() ? std::string_view() : r.tls_cipher);
    out += ",\"request_id\":";
    append_json_string_or_null(out, r.request_id);
    out += ",\"refused\":";
    append_json_string_or_null(out, r.refused_by);
    if (!r.cache_result.empty()) {
        out += ",\"cache\":\"";
        out += r.cache_result;
        out += '"';
    }
    out += '}';
}

// ---- writing ---------------------------------------------------------------

// Collects whole lines and writes them with as few write(2) calls as it can,
// each ending on a line boundary. With O_APPEND every write lands whole at
// the end of the file, so the workers sharing one file never split each
// other's lines (stdio's FILE buffer, which basic_file_sink uses, flushes at
// arbitrary byte counts and would). On a pipe only writes of PIPE_BUF bytes
// or less are atomic, so there the chunks are kept that small.
// Runs on the logger's writer thread only.
class LineSink final : public spdlog::sinks::base_sink<std::mutex> {
public:
    LineSink(int fd, bool owned) : fd_(fd), owned_(owned) {
        struct stat info {};
        if (::fstat(fd_, &info) == 0 && !S_ISREG(info.st_mode)) chunk_limit_ = PIPE_BUF;
    }
    ~LineSink() override {
        write_out();  // errors have nowhere to go any more
        if (owned_) ::close(fd_);
    }

protected:
    // The payload is the whole line: the logger's pattern is "%v", so the
    // formatter is skipped and the bytes are copied once.
    void sink_it_(const spdlog::details::log_msg& message) override {
        buffer_.append(message.payload.data(), message.payload.size());
        buffer_ += '\n';
        if (buffer_.size() >= batch_bytes) check(write_out());
    }
    void flush_() override { check(write_out()); }

private:
    static constexpr size_t batch_bytes = 64 * 1024;

    // Reported through spdlog's error handler (stderr, at most once a second).
    static void check(int error) {
        if (error != 0) spdlog::throw_spdlog_ex("access log write failed", error);
    }

    // Writes everything buffered; returns 0 or the errno that made it drop
    // the rest (a full disk must not make the buffer grow without bound).
    int write_out() {
        size_t done = 0;
        int error = 0;
        int stalls = 0;
        while (done < buffer_.size()) {
            size_t length = buffer_.size() - done;
            if (length > chunk_limit_) {
                size_t cut = buffer_.rfind('\n', done + chunk_limit_ - 1);
                // A single line longer than the limit goes out whole.
                length = cut != std::string::npos && cut >= done
                             ? cut + 1 - done
                             : buffer_.find('\n', done) + 1 - done;
            }
            ssize_t written = ::write(fd_, buffer_.data() + done, length);
            if (written > 0) {
                done += static_cast<size_t>(written);
                continue;
            }
            if (written < 0 && errno == EINTR) continue;
            // stdout may be a non-blocking pipe (shared with a libuv parent):
            // wait on it here, on the writer thread, for a few seconds.
            if (written < 0 && errno == EAGAIN && ++stalls <= 5) {
                pollfd ready{.fd = fd_, .events = POLLOUT, .revents = 0};
                ::poll(&ready, 1, 1000);
                continue;
            }
            error = written < 0 ? errno : EIO;
            break;
        }
        buffer_.clear();
        return error;
    }

    int fd_;
    bool owned_;
    size_t chunk_limit_ = SIZE_MAX;
    std::string buffer_;
};

// 8192 queued lines ride out a disk stall of ~80 ms at 100k requests/s per
// worker; the queue's slots (~400 bytes each) cost ~3 MiB per worker.
constexpr size_t queue_lines = 8192;

// Blocks every signal in the calling thread for its lifetime, so threads
// started meanwhile inherit a full mask: SIGTERM, SIGUSR1 and friends must
// reach the event loop thread, never the writer or the flusher.
class SignalsBlocked {
public:
    SignalsBlocked() {
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &saved_);
    }
    ~SignalsBlocked() { pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }
    SignalsBlocked(const SignalsBlocked&) = delete;
    SignalsBlocked& operator=(const SignalsBlocked&) = delete;

private:
    sigset_t saved_;
};

}  // namespace

void format_access_line(std::string& out, const AccessRecord& record, config::AccessFormat format) {
    if (format == config::AccessFormat::json)
        format_json(out, record);
    else
        format_combined(out, record);
}

AccessLog::AccessLog(const config::LogConfig& log) : config_(log) {
    if (config_.access == "off") return;
    line_.reserve(512);
    SignalsBlocked blocked;
    pool_ = std::make_shared<spdlog::details::thread_pool>(queue_lines, 1);
    logger_ = open_logger();
    // logger->flush() only queues a flush behind the lines already queued:
    // the writer thread does it. Not spdlog::flush_every: that walks the
    // registry, and these loggers are deliberately not registered (the name
    // would clash between workers, and the registry's thread does not
    // survive fork()).
    flusher_ = std::make_unique<spdlog::details::periodic_worker>([this] { flush_now(); },
                                                                  std::chrono::seconds(1));
}

AccessLog::~AccessLog() {
    flusher_.reset();  // joined: nothing flushes behind our back from here on
    logger_.reset();
    // Writes what is still queued (the pool queues its stop behind it, with
    // the blocking policy), then joins the writer. The last queued line lets
    // go of its logger, whose sink writes its buffer and closes the file.
    report_dropped_lines();
    pool_.reset();
}

void AccessLog::report_dropped_lines() {
    uint64_t dropped = dropped_lines();
    if (dropped == reported_drops_) return;
    log::warn(
        "access log '{}': {} lines lost since the last report: the disk fell more than "
        "{} lines behind; requests were served, their lines dropped. Check the disk "
        "holding the log, or log less (access_format)",
        config_.access, dropped - reported_drops_, queue_lines);
    reported_drops_ = dropped;
}

std::shared_ptr<spdlog::async_logger> AccessLog::open_logger() {
    int fd = STDOUT_FILENO;
    bool owned = false;
    if (config_.access != "stdout") {
        fd = ::open(config_.access.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) {
            log::error("cannot open access log '{}': {}", config_.access, std::strerror(errno));
            return nullptr;
        }
        owned = true;
    }
    // overrun_oldest, not block: the loop must never wait for the disk. If
    // the writer falls 8192 lines behind, the oldest queued lines are lost
    // (dropped_lines() counts them) while requests go on being served.
    auto logger = std::make_shared<spdlog::async_logger>(
        "access", std::make_shared<LineSink>(fd, owned), pool_,
        spdlog::async_overflow_policy::overrun_oldest);
    logger->set_pattern("%v");
    logger->set_level(spdlog::level::info);
    return logger;
}

void AccessLog::log(const AccessRecord& record) {
    if (!logger_) return;
    line_.clear();
    format_access_line(line_, record, config_.access_format);
    logger_->log(spdlog::level::info, spdlog::string_view_t(line_.data(), line_.size()));
}

void AccessLog::reopen() {
    report_dropped_lines();
    if (!pool_ || config_.access == "stdout") return;
    std::shared_ptr<spdlog::async_logger> fresh = open_logger();
    if (!fresh) return;  // said why; the old file (if any) keeps the lines
    std::shared_ptr<spdlog::async_logger> old;
    {
        std::lock_guard<std::mutex> lock(logger_mutex_);
        old = std::exchange(logger_, std::move(fresh));
    }
    // Lines queued for the old file still reach it: the queue holds its
    // logger until they are written, then its sink closes the file.
    if (old) old->flush();
}

uint64_t AccessLog::dropped_lines() const {
    return pool_ ? pool_->overrun_counter() : 0;
}

void AccessLog::flush_now() {
    std::shared_ptr<spdlog::async_logger> logger;
    {
        std::lock_guard<std::mutex> lock(logger_mutex_);
        logger = logger_;
    }
    if (logger) logger->flush();
}

}  // namespace portico::metrics
