#include "harness.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <vector>

namespace portico::test {

namespace fs = std::filesystem;

TempDir::TempDir() {
    char pattern[] = "/tmp/portico-test-XXXXXX";
    if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
}

std::string TempDir::write(const std::string& relative, const std::string& content) const {
    fs::path full = fs::path(path_) / relative;
    fs::create_directories(full.parent_path());
    std::ofstream(full, std::ios::binary) << content;
    return full.string();
}

namespace {

std::string substitute_listen(std::string text, const std::string& address) {
    for (size_t at; (at = text.find("{listen}")) != std::string::npos;)
        text.replace(at, 8, address);
    return text;
}

// Every number that follows `marker` in `text` ("(port 8080)" -> 8080).
std::vector<long> numbers_after(const std::string& text, const std::string& marker) {
    std::vector<long> numbers;
    for (size_t at = 0; (at = text.find(marker, at)) != std::string::npos;) {
        at += marker.size();
        char* end = nullptr;
        long value = std::strtol(text.c_str() + at, &end, 10);
        if (end != text.c_str() + at) numbers.push_back(value);
    }
    return numbers;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    return content.str();
}

}  // namespace

Portico::Portico(const std::string& config_text, const LaunchOptions& options) {
    dir_.write("portico.toml", substitute_listen(config_text, "127.0.0.1:0"));
    std::string log_path = dir_.path() + "/error.log";
    // Everything the child needs is made before fork(): this process has
    // threads (the tests' upstream servers), and after a fork only
    // async-signal-safe calls are; an allocation may wait forever on a lock
    // another thread held at that moment (seen in the ASan build: a start
    // that never logged a line).
    const std::string config = config_path();
    std::vector<char*> environment;
    for (char** variable = environ; *variable != nullptr; ++variable) {
        std::string_view entry(*variable);
        bool replaced = std::any_of(options.environment.begin(), options.environment.end(),
                                    [&](const std::string& given) {
                                        return entry.substr(0, entry.find('=') + 1) ==
                                               std::string_view(given).substr(0, given.find('=') + 1);
                                    });
        if (!replaced) environment.push_back(*variable);
    }
    for (const std::string& variable : options.environment)
        environment.push_back(const_cast<char*>(variable.c_str()));
    environment.push_back(nullptr);
    char* const arguments[] = {const_cast<char*>(PORTICO_BINARY), const_cast<char*>("-c"),
                               const_cast<char*>(config.c_str()), nullptr};
    pid_ = fork();
    if (pid_ == 0) {
        int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        // The tests run as root, whose file access ignores modes. Deployed
        // workers run as a user for whom `chmod 000` means "unreadable":
        // without these two capabilities (dropped from the bounding set, so
        // exec does not grant them back) portico sees files as they would.
        ::prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0);
        ::prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH, 0, 0, 0);
        for (int capability : options.dropped_capabilities)
            ::prctl(PR_CAPBSET_DROP, capability, 0, 0, 0);
        dup2(log_fd, STDERR_FILENO);
        dup2(log_fd, STDOUT_FILENO);
        execve(PORTICO_BINARY, arguments, environment.data());
        _exit(127);
    }
    // The master logs "listening on ADDRESS (port N)" once its sockets are bound.
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
        std::string text = log();
        std::vector<long> ports = numbers_after(text, "(port ");
        if (!ports.empty()) {
            port_ = static_cast<uint16_t>(ports.front());
            break;
        }
        int status;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            exited_ = true;
            throw std::runtime_error("portico exited at start:\n" + text);
        }
        std::this_thread::sleep_for(10ms);
    }
    if (port_ == 0) throw std::runtime_error("portico did not start listening:\n" + log());
    // Serving once every worker has logged its start.
    wait_for_log("worker", 1);
}

Portico::~Portico() {
    if (pid_ <= 0) return;
    // The master first: killed workers would otherwise be restarted by it
    // and outlive the test. Then every worker it ever logged.
    std::vector<pid_t> workers = worker_pids();
    if (!exited_) {
        ::kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    for (pid_t worker : worker_pids()) workers.push_back(worker);
    for (pid_t worker : workers) ::kill(worker, SIGKILL);
}

void Portico::rewrite_config(const std::string& config_text) const {
    dir_.write("portico.toml",
               substitute_listen(config_text, "127.0.0.1:" + std::to_string(port_)));
}

void Portico::signal(int signum) const { ::kill(pid_, signum); }

std::optional<int> Portico::wait_exit(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        int status;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            exited_ = true;
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        std::this_thread::sleep_for(10ms);
    }
    return std::nullopt;
}

std::string Portico::log() const { return read_file(dir_.path() + "/error.log"); }

bool Portico::wait_for_log(const std::string& text, int count,
                           std::chrono::milliseconds timeout) const {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        std::string content = log();
        int found = 0;
        for (size_t at = 0; (at = content.find(text, at)) != std::string::npos; at += text.size())
            ++found;
        if (found >= count) return true;
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

std::vector<pid_t> Portico::worker_pids() const {
    std::vector<pid_t> pids;
    for (long number : numbers_after(log(), "(pid ")) {
        pid_t pid = static_cast<pid_t>(number);
        if (pid == pid_ || std::find(pids.begin(), pids.end(), pid) != pids.end()) continue;
        // Alive and still our child (a zombie's stat says 'Z').
        std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
        size_t paren = stat.rfind(')');
        if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z')
            pids.push_back(pid);
    }
    return pids;
}

std::string Response::header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
}

int connect_loopback(uint16_t port, int receive_buffer, int max_segment) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (receive_buffer > 0)
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    if (max_segment > 0) ::setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &max_segment, sizeof max_segment);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        int error = errno;
        ::close(fd);
        throw std::runtime_error(std::string("connect: ") + std::strerror(error));
    }
    return fd;
}

Client::Client(uint16_t port, int receive_buffer, int max_segment)
    : fd_(connect_loopback(port, receive_buffer, max_segment)) {}

Client::~Client() { ::close(fd_); }

void Client::send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
        ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) return;  // the server closed: the test sees it on reading
        sent += static_cast<size_t>(n);
    }
}

bool Client::fill(std::chrono::steady_clock::time_point deadline) {
    if (eof_) return false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd_, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) return false;
    char chunk[65536];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) {
        eof_ = true;
        return false;
    }
    buffered_.append(chunk, static_cast<size_t>(n));
    return true;
}

std::optional<Response> Client::read_response(std::chrono::milliseconds timeout,
                                              bool head_request) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    size_t end;
    while ((end = buffered_.find("\r\n\r\n")) == std::string::npos)
        if (!fill(deadline)) return std::nullopt;
    Response response;
    response.head = buffered_.substr(0, end);
    buffered_.erase(0, end + 4);
    std::istringstream lines(response.head);
    std::string line;
    std::getline(lines, line);
    if (line.rfind("HTTP/1.", 0) != 0 || line.size() < 12) return std::nullopt;
    response.status = std::stoi(line.substr(9, 3));
    while (std::getline(lines, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        size_t value_start = line.find_first_not_of(' ', colon + 1);
        response.headers[name] = value_start == std::string::npos ? "" : line.substr(value_start);
    }
    bool bodyless = head_request || response.status < 200 || response.status == 204 ||
                    response.status == 304;
    if (bodyless) return response;
    std::string length_text = response.header("content-length");
    if (length_text.empty()) {
        while (fill(deadline)) {}
        if (!eof_) return std::nullopt;
        response.body = std::move(buffered_);
        buffered_.clear();
        return response;
    }
    size_t length = std::stoul(length_text);
    while (buffered_.size() < length)
        if (!fill(deadline)) return std::nullopt;
    response.body = buffered_.substr(0, length);
    buffered_.erase(0, length);
    return response;
}

std::optional<std::string> Client::read_until_close(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!eof_)
        if (!fill(deadline) && !eof_) return std::nullopt;
    std::string all = std::move(buffered_);
    buffered_.clear();
    return all;
}

bool Client::closed_by_server(std::chrono::milliseconds timeout) {
    return read_until_close(timeout).has_value();
}

std::optional<Response> fetch(uint16_t port, const std::string& path,
                              const std::string& extra_headers) {
    Client client(port);
    client.send("GET " + path + " HTTP/1.1\r\nHost: test\r\n" + extra_headers + "\r\n");
    return client.read_response();
}

uint16_t local_port(int fd) {
    sockaddr_in address{};
    socklen_t length = sizeof address;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    return ntohs(address.sin_port);
}

std::string socket_statistics(const std::string& arguments) {
    std::string command = "ss -tHn " + arguments + " 2>/dev/null";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return {};
    std::string output;
    char chunk[512];
    while (size_t got = std::fread(chunk, 1, sizeof chunk, pipe)) output.append(chunk, got);
    ::pclose(pipe);
    return output;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    return content.str();
}

std::string random_bytes(size_t size, uint64_t seed) {
    std::mt19937_64 generator(seed);
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; i += 8) {
        uint64_t word = generator();
        for (size_t j = 0; j < 8 && i + j < size; ++j)
            bytes[i + j] = static_cast<char>((word >> (8 * j)) & 0xff);
    }
    return bytes;
}

}  // namespace portico::test
