#include "https_upstream.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <vector>

#include "tls_support.hpp"

extern char** environ;

namespace portico::test {

namespace {

constexpr const char* server_script = R"JS(
const https = require("node:https");
const fs = require("node:fs");
const options = { cert: fs.readFileSync(process.env.CERT), key: fs.readFileSync(process.env.KEY) };
if (process.env.CLIENT_CA) {
  options.ca = fs.readFileSync(process.env.CLIENT_CA);
  options.requestCert = true;
  options.rejectUnauthorized = true;
}
let connections = 0;
function seen(socket) {
  if (!socket.number) socket.number = ++connections;
  const peer = socket.getPeerCertificate();
  return {
    "X-Alpn": socket.alpnProtocol || "none",
    "X-Sni": socket.servername || "none",
    "X-Resumed": String(socket.isSessionReused()),
    "X-Client": (peer && peer.subject && peer.subject.CN) || "none",
    "X-Connection": String(socket.number),
  };
}
const server = https.createServer(options, (req, res) => {
  const headers = seen(req.socket);
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    let body;
    const big = /\/big\/(\d+)$/.exec(req.url);
    if (big) {
      const size = Number(big[1]);
      body = Buffer.alloc(size);
      for (let i = 0; i < size; ++i) body[i] = 48 + (i % 10);
    } else if (req.url.endsWith("/echo")) {
      body = Buffer.concat(chunks);
    } else {
      body = Buffer.from("hello " + req.url);
    }
    headers["Content-Type"] = "text/plain";
    headers["Content-Length"] = body.length;
    res.writeHead(200, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 30000;
server.on("upgrade", (req, socket, head) => {
  socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
  if (head.length) socket.write(head);
  socket.pipe(socket);
});
server.on("tlsClientError", () => {});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
)JS";

}  // namespace

HttpsUpstream::HttpsUpstream(const HttpsUpstreamOptions& options) {
    // Everything the child needs is made before the spawn.
    std::vector<std::string> variables = {"CERT=" + options.cert, "KEY=" + options.key};
    if (!options.client_ca.empty()) variables.push_back("CLIENT_CA=" + options.client_ca);
    for (char** entry = environ; *entry; ++entry) variables.emplace_back(*entry);
    std::vector<char*> environment;
    for (std::string& variable : variables) environment.push_back(variable.data());
    environment.push_back(nullptr);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    char node[] = "node", dash_e[] = "-e";
    std::string script = server_script;
    char* arguments[] = {node, dash_e, script.data(), nullptr};
    int spawned = posix_spawnp(&pid_, "node", &actions, nullptr, arguments, environment.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (spawned != 0) {
        ::close(out[0]);
        throw std::runtime_error("cannot start node");
    }
    // The port, on the first line of its output.
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
        pollfd ready{out[0], POLLIN, 0};
        if (::poll(&ready, 1, 100) <= 0) continue;
        char buffer[64];
        ssize_t got = ::read(out[0], buffer, sizeof buffer);
        if (got <= 0) break;
        line.append(buffer, static_cast<size_t>(got));
    }
    ::close(out[0]);
    if (line.find('\n') == std::string::npos) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        throw std::runtime_error("the node HTTPS upstream did not start");
    }
    port_ = static_cast<uint16_t>(std::stoi(line));
}

HttpsUpstream::~HttpsUpstream() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
}

void make_leaf(const std::string& dir, const std::string& name, const std::string& subject,
               const std::string& san, const std::string& usage) {
    CommandResult made = run_shell(
        "cd '" + dir +
        "' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
        "-nodes -keyout " +
        name + ".key -out " + name + ".pem -subj '" + subject +
        "' -days 30 -CA ca.pem -CAkey ca.key -addext 'subjectAltName=" + san +
        "' -addext 'extendedKeyUsage=" + usage + "' -addext 'basicConstraints=CA:FALSE' 2>&1");
    if (made.exit_code != 0) throw std::runtime_error("openssl req failed: " + made.output);
}

}  // namespace portico::test
