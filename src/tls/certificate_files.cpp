#include "tls/certificate_files.hpp"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tls/openssl_error.hpp"

namespace portico::tls {

namespace {

// Never prompt for a passphrase on the terminal: an encrypted key fails to load.
int no_passphrase(char*, int, int, void*) {
    return 0;
}

}  // namespace

// The file is opened by us first so a missing or unreadable file says so
// in the operator's words, not OpenSSL's.
std::string readable_file_problem(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::strerror(errno);
    ::close(fd);
    return {};
}

std::string use_certificate_files(SSL_CTX* context, const config::CertificateFiles& files) {
    SSL_CTX_set_default_passwd_cb(context, no_passphrase);
    if (std::string why = readable_file_problem(files.cert); !why.empty())
        return "cannot read certificate " + files.cert + ": " + why;
    if (std::string why = readable_file_problem(files.key); !why.empty())
        return "cannot read key " + files.key + ": " + why;
    if (SSL_CTX_use_certificate_chain_file(context, files.cert.c_str()) != 1)
        return "cannot load certificate " + files.cert + ": " + take_openssl_errors() +
               " (expected PEM, leaf first)";
    if (SSL_CTX_use_PrivateKey_file(context, files.key.c_str(), SSL_FILETYPE_PEM) != 1) {
        // A key of the certificate's type is checked against it as it
        // loads: a good key of another certificate fails here.
        unsigned long reason = ERR_peek_last_error();
        if (ERR_GET_LIB(reason) == ERR_LIB_X509 &&
            ERR_GET_REASON(reason) == X509_R_KEY_VALUES_MISMATCH) {
            clear_openssl_errors();
            return "key " + files.key + " does not match certificate " + files.cert;
        }
        return "cannot load key " + files.key + ": " + take_openssl_errors() +
               " (expected an unencrypted PEM key)";
    }
    if (SSL_CTX_check_private_key(context) != 1) {
        clear_openssl_errors();
        return "key " + files.key + " does not match certificate " + files.cert;
    }
    return {};
}

}  // namespace portico::tls
