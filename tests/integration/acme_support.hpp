// What the ACME tests share: Debian's pebble (Let's Encrypt's test CA) and
// its DNS (pebble-challtestsrv, answering 127.0.0.1 for every name) started
// on loopback with a config the test writes; a fake CA (`openssl s_server
// -HTTP`, each file a whole response) for the CA that lies; and the config
// of a portico with [acme].
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"

namespace portico::test {

// A port free on 127.0.0.1 now (bound to 0, then closed).
uint16_t free_port();

// A process started with `arguments` (argv[0] a program on the PATH) in
// `folder`, its output in `log`; killed (SIGKILL, by pid) when destroyed.
class Child {
public:
    Child(const std::vector<std::string>& arguments, const std::string& folder,
          const std::string& log, const std::vector<std::string>& environment = {});
    ~Child();
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

private:
    pid_t pid_ = -1;
};

// A certificate for 127.0.0.1 signed by a root of the test's own, for the
// CAs' HTTPS APIs: DIR/api.pem, DIR/api.key, DIR/root.pem (portico's ca_root).
void make_api_certificate(const std::string& folder);

struct PebbleOptions {
    uint16_t http_port = 0;        // where pebble validates HTTP-01: portico's cleartext listener
    uint16_t tls_port = 0;         // ... and TLS-ALPN-01
    int validity_seconds = 0;      // of the certificates it issues; 0: pebble's default (5 years)
    int nonce_reject_percent = 5;  // good nonces refused as badNonce (pebble's default: 5)
    std::string ocsp_responder{};  // the OCSP URL its certificates name; "": none
};

class Pebble {
public:
    explicit Pebble(const PebbleOptions& options);
    std::string directory() const;  // https://127.0.0.1:PORT/dir
    std::string api_root() const { return dir_.path() + "/root.pem"; }
    // The root of the chains it issues (made fresh at each start), as a PEM file.
    std::string issuing_root() const;
    // Its intermediate (the issuer of the leaves) and that one's key, as PEM
    // files: an OCSP responder of the test's own signs with them.
    std::string intermediate() const;
    std::string intermediate_key() const;
    std::string log() const { return read_text(dir_.path() + "/pebble.log"); }

private:
    // GET `path` on the management API into DIR/file; the file's path.
    std::string management_file(const std::string& path, const std::string& file) const;
    TempDir dir_;
    uint16_t api_port_ = 0, management_port_ = 0;
    std::unique_ptr<Child> dns_, pebble_;
};

// A CA that answers GET /dir with the whole HTTP response `dir_response`.
class FakeCa {
public:
    explicit FakeCa(const std::string& dir_response);
    std::string directory() const;
    std::string api_root() const { return dir_.path() + "/root.pem"; }

private:
    TempDir dir_;
    uint16_t port_ = 0;
    std::unique_ptr<Child> server_;
};

// Whether pebble is installed (deploy/install-deps.sh --test installs it).
bool pebble_installed();

// A portico: cleartext on 127.0.0.1:http_port (0: any), TLS on 127.0.0.1:0
// with `default_certificate` (a Certificates::entry), [acme] with
// `directory`, `ca_root` and `storage`, and one site a.acme.test and
// www.a.acme.test with acme = true answering "acme site\n"; `tls_options`
// are more [tls] lines.
std::string acme_config(uint16_t http_port, const std::string& default_certificate,
                        const std::string& directory, const std::string& ca_root,
                        const std::string& storage, const std::string& tls_options = "",
                        const std::string& more = "");

}  // namespace portico::test
