#include "acme_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <thread>

#include "tls_support.hpp"

namespace portico::test {

uint16_t free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    uint16_t port = local_port(fd);
    ::close(fd);
    return port;
}

Child::Child(const std::vector<std::string>& arguments, const std::string& folder,
             const std::string& log, const std::vector<std::string>& environment) {
    // Everything made before fork(): the test process has threads.
    std::vector<char*> argv;
    for (const std::string& argument : arguments)
        argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    std::vector<std::string> variables = environment;
    for (char** variable = environ; *variable != nullptr; ++variable)
        variables.emplace_back(*variable);
    std::vector<char*> envp;
    for (std::string& variable : variables) envp.push_back(variable.data());
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
        int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
        if (::chdir(folder.c_str()) != 0) _exit(126);
        ::execvpe(argv[0], argv.data(), envp.data());
        _exit(127);
    }
}

Child::~Child() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
}

void make_api_certificate(const std::string& folder) {
    CommandResult made = run_shell(
        "cd " + folder +
        " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "
        "root.key -out root.pem -days 2 -subj /CN=portico-test-acme-api-root"
        " && openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout api.key "
        "-out api.csr -subj /CN=127.0.0.1"
        " && printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > api.ext"
        " && openssl x509 -req -in api.csr -CA root.pem -CAkey root.key -CAcreateserial -days 2 "
        "-extfile api.ext -out api.pem");
    if (made.exit_code != 0)
        throw std::runtime_error("making the API certificate:\n" + made.output);
}

bool pebble_installed() {
    return run_shell("command -v pebble").exit_code == 0;
}

namespace {

// Waits until `url` answers over HTTPS (verified against `root`).
void wait_until_answering(const std::string& url, const std::string& root,
                          const std::string& what) {
    for (int attempt = 0; attempt < 200; ++attempt) {
        if (run_shell("curl -sf --max-time 2 --cacert " + root + " " + url + " -o /dev/null")
                .exit_code == 0)
            return;
        std::this_thread::sleep_for(50ms);
    }
    throw std::runtime_error(what + " did not answer at " + url);
}

}  // namespace

Pebble::Pebble(const PebbleOptions& options) {
    make_api_certificate(dir_.path());
    api_port_ = free_port();
    management_port_ = free_port();
    uint16_t dns_port = free_port();
    std::string validity =
        options.validity_seconds > 0
            ? ",\n\"certificateValidityPeriod\": " + std::to_string(options.validity_seconds)
            : "";
    dir_.write(
        "pebble.json",
        "{\"pebble\": {\n\"listenAddress\": \"127.0.0.1:" + std::to_string(api_port_) +
            "\",\n\"managementListenAddress\": \"127.0.0.1:" + std::to_string(management_port_) +
            "\",\n\"certificate\": \"" + dir_.path() + "/api.pem\",\n\"privateKey\": \"" +
            dir_.path() + "/api.key\",\n\"httpPort\": " + std::to_string(options.http_port) +
            ",\n\"tlsPort\": " + std::to_string(options.tls_port ? options.tls_port : free_port()) +
            ",\n\"ocspResponderURL\": \"" + options.ocsp_responder +
            "\",\n\"externalAccountBindingRequired\": false" + validity + "\n}}\n");
    std::string dns = "127.0.0.1:" + std::to_string(dns_port);
    dns_ = std::make_unique<Child>(
        std::vector<std::string>{"pebble-challtestsrv", "-defaultIPv4", "127.0.0.1", "-defaultIPv6",
                                 "", "-dns01", dns, "-http01", "", "-https01", "", "-tlsalpn01", "",
                                 "-management", "127.0.0.1:" + std::to_string(free_port())},
        dir_.path(), dir_.path() + "/dns.log");
    // NOSLEEP: pebble validates at once instead of after a random pause.
    pebble_ = std::make_unique<Child>(
        std::vector<std::string>{"pebble", "-config", dir_.path() + "/pebble.json", "-strict",
                                 "-dnsserver", dns},
        dir_.path(), dir_.path() + "/pebble.log",
        std::vector<std::string>{
            "PEBBLE_VA_NOSLEEP=1",
            "PEBBLE_WFE_NONCEREJECT=" + std::to_string(options.nonce_reject_percent)});
    wait_until_answering(directory(), api_root(), "pebble");
}

std::string Pebble::directory() const {
    return "https://127.0.0.1:" + std::to_string(api_port_) + "/dir";
}

std::string Pebble::issuing_root() const {
    return management_file("/roots/0", "issuing-root.pem");
}

std::string Pebble::intermediate() const {
    return management_file("/intermediates/0", "intermediate.pem");
}

std::string Pebble::intermediate_key() const {
    return management_file("/intermediate-keys/0", "intermediate.key");
}

std::string Pebble::management_file(const std::string& path, const std::string& file) const {
    std::string to = dir_.path() + "/" + file;
    CommandResult fetched =
        run_shell("curl -sf --max-time 5 --cacert " + api_root() +
                  " https://127.0.0.1:" + std::to_string(management_port_) + path + " -o " + to);
    if (fetched.exit_code != 0)
        throw std::runtime_error("pebble's " + path + ":\n" + fetched.output);
    return to;
}

FakeCa::FakeCa(const std::string& dir_response) {
    make_api_certificate(dir_.path());
    dir_.write("dir", dir_response);
    port_ = free_port();
    // -HTTP: the file named by the path is sent as the whole response.
    server_ = std::make_unique<Child>(
        std::vector<std::string>{"openssl", "s_server", "-quiet", "-HTTP", "-accept",
                                 "127.0.0.1:" + std::to_string(port_), "-cert",
                                 dir_.path() + "/api.pem", "-key", dir_.path() + "/api.key"},
        dir_.path(), dir_.path() + "/s_server.log");
    for (int attempt = 0; attempt < 200; ++attempt) {
        try {
            Client probe(port_);
            return;
        } catch (const std::exception&) {
            std::this_thread::sleep_for(20ms);
        }
    }
    throw std::runtime_error("openssl s_server did not start");
}

std::string FakeCa::directory() const {
    return "https://127.0.0.1:" + std::to_string(port_) + "/dir";
}

std::string acme_config(uint16_t http_port, const std::string& default_certificate,
                        const std::string& directory, const std::string& ca_root,
                        const std::string& storage, const std::string& tls_options,
                        const std::string& more) {
    return "[server]\nlisten = [\"127.0.0.1:" + std::to_string(http_port) +
           "\"]\nworkers = 1\n\n[tls]\nlisten = [\"127.0.0.1:0\"]\ncertificates = [" +
           default_certificate + "]\n" + tls_options +
           "\n[metrics]\nlisten = \"127.0.0.1:0\"\n\n[acme]\nemail = "
           "\"ops@example.com\"\ndirectory = \"" +
           directory + "\"\nca_root = \"" + ca_root + "\"\nstorage = \"" + storage + "\"\n\n" +
           "[[site]]\nnames = [\"a.acme.test\", \"www.a.acme.test\"]\nacme = true\n\n"
           "[[site.location]]\nprefix = \"/\"\nrespond = { status = 200, body = \"acme site\\n\" "
           "}\n" +
           more;
}

}  // namespace portico::test
