#include "tls/tls_stream.hpp"

#include <openssl/err.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/io_poller.hpp"
#include "tls/server_tls.hpp"

namespace portico::tls {

namespace {

// The error queue is per thread and shared by every connection: what one
// failed call left must not be read as the next one's.
const char* take_reason() {
    unsigned long code = ERR_peek_last_error();
    const char* reason = code ? ERR_reason_error_string(code) : nullptr;
    ERR_clear_error();
    return reason ? reason : "connection reset";
}

// The gathering BIO: appends whatever OpenSSL writes to the worker's
// buffer, and never blocks.
int gather_write(BIO* bio, const char* data, size_t length, size_t* written) {
    static_cast<std::string*>(BIO_get_data(bio))->append(data, length);
    *written = length;
    return 1;
}

long gather_control(BIO*, int command, long, void*) {
    return command == BIO_CTRL_FLUSH ? 1 : 0;  // flushing is send_gathered()'s
}

const BIO_METHOD* gather_method() {
    static BIO_METHOD* const method = [] {
        BIO_METHOD* made = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "portico gather");
        BIO_meth_set_write_ex(made, gather_write);
        BIO_meth_set_ctrl(made, gather_control);
        return made;
    }();
    return method;
}

constexpr size_t gather_reserve = 80 * 1024;  // a flush's 64 KiB of records, and their overhead

}  // namespace

WriteGather::WriteGather() : bio_(BIO_new(gather_method())) {
    bytes_.reserve(gather_reserve);
    BIO_set_data(bio_, &bytes_);
    BIO_set_init(bio_, 1);
}

WriteGather::~WriteGather() { BIO_free(bio_); }

BIO* WriteGather::new_reference() {
    BIO_up_ref(bio_);
    return bio_;
}

TlsStream::TlsStream(SSL* ssl, int fd, WriteGather& gather)
    : ssl_(ssl), fd_(fd), gathered_(gather.bytes()) {
    // Kernel TLS needs OpenSSL's own socket BIO for writes.
    if (!kernel_tls_available()) SSL_set0_wbio(ssl_, gather.new_reference());
}

TlsStream::Step TlsStream::send_gathered() {
    holding_ = false;
    if (gathered_.empty() && unsent_.empty()) return Step::done;
    // Nothing overtakes what an earlier call kept: it goes first, in the
    // same writev.
    iovec pieces[2] = {{unsent_.data(), unsent_.size()}, {gathered_.data(), gathered_.size()}};
    int first = unsent_.empty() ? 1 : 0;
    int count = gathered_.empty() ? 1 : 2 - first;
    ssize_t written;
    do {
        written = ::writev(fd_, pieces + first, count);
    } while (written < 0 && errno == EINTR);
    if (written < 0 && errno != EAGAIN) {
        failure_ = "socket error";
        gathered_.clear();
        return Step::failed;
    }
    size_t sent = written < 0 ? 0 : static_cast<size_t>(written);
    size_t from_unsent = std::min(sent, unsent_.size());
    if (from_unsent == unsent_.size() && from_unsent > 0) {
        std::string().swap(unsent_);  // an idle connection keeps no memory
    } else {
        unsent_.erase(0, from_unsent);
    }
    size_t from_gathered = sent - from_unsent;
    if (from_gathered < gathered_.size()) unsent_.append(gathered_, from_gathered);
    gathered_.clear();
    return unsent_.empty() ? Step::done : Step::blocked;
}

ssize_t TlsStream::blocked_or_failed(int result, int& wants) {
    switch (SSL_get_error(ssl_, result)) {
    case SSL_ERROR_WANT_READ:
        wants = core::io_readable;
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_WANT_WRITE:
        wants = core::io_writable;
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_ZERO_RETURN:
        return 0;
    case SSL_ERROR_SYSCALL:
        failure_ = errno == 0 ? "connection closed" : "socket error";
        ERR_clear_error();
        if (errno == 0 || errno == EAGAIN) errno = ECONNRESET;
        return -1;
    default:
        if (ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_HTTP_REQUEST) plain_http_ = true;
        failure_ = take_reason();
        errno = EPROTO;
        return -1;
    }
}

TlsStream::Step TlsStream::handshake() {
    read_wants_ = 0;
    int result = SSL_do_handshake(ssl_);
    if (result == 1 && unsent_.empty()) {
        established_ = true;
        unsent_.assign(gathered_);  // not swap: the worker's buffer keeps its capacity
        gathered_.clear();
        holding_ = !unsent_.empty();
        return Step::done;
    }
    if (send_gathered() == Step::failed) return Step::failed;
    if (result == 1) {
        established_ = true;
        return Step::done;
    }
    // A close during the handshake is a failed handshake too.
    if (blocked_or_failed(result, read_wants_) < 0 && errno == EAGAIN) return Step::blocked;
    if (failure_[0] == '\0') failure_ = "closed during the handshake";
    return Step::failed;
}

ssize_t TlsStream::read(char* buffer, size_t size) {
    read_wants_ = 0;
    // Reading can write (a KeyUpdate's answer, an alert), and a client that
    // never reads would have those answers kept for it without end (a
    // KeyUpdate flood): past this much unsent, reading waits for the socket
    // to take it, as nginx's SSL_read does on WANT_WRITE. (One call answers
    // at most a read-ahead buffer's worth: see SSL_MODE_AUTO_RETRY in
    // server_tls.cpp.)
    if (unsent_.size() > max_unsent_while_reading) {
        read_wants_ = core::io_writable;
        errno = EAGAIN;
        return -1;
    }
    size_t got = 0;
    int result = SSL_read_ex(ssl_, buffer, size, &got);
    if (!gathered_.empty() && send_gathered() == Step::failed) {
        errno = ECONNRESET;
        return -1;
    }
    if (result == 1) return static_cast<ssize_t>(got);
    return blocked_or_failed(result, read_wants_);
}

ssize_t TlsStream::write(const char* bytes, size_t size) {
    write_wants_ = 0;
    size_t written = 0;
    int result = SSL_write_ex(ssl_, bytes, size, &written);
    if (result == 1) return static_cast<ssize_t>(written);
    ssize_t outcome = blocked_or_failed(result, write_wants_);
    if (outcome == 0) errno = EPIPE;  // close_notify received: nothing more goes out
    return -1;
}

bool TlsStream::kernel_sends() const { return BIO_get_ktls_send(SSL_get_wbio(ssl_)); }

ssize_t TlsStream::send_file(int fd, off_t offset, size_t size) {
    write_wants_ = 0;
    ossl_ssize_t sent = SSL_sendfile(ssl_, fd, offset, size, 0);
    if (sent >= 0) return sent;
    if (blocked_or_failed(static_cast<int>(sent), write_wants_) == 0) errno = EPIPE;
    return -1;
}

void TlsStream::add_close_notify() {
    if (close_after_output_ && established_ && SSL_get_shutdown(ssl_) == 0) SSL_shutdown(ssl_);
}

void TlsStream::shutdown() {
    if (established_ && !(SSL_get_shutdown(ssl_) & SSL_RECEIVED_SHUTDOWN)) {
        // A second SSL_shutdown would wait for the client's close_notify.
        if (!(SSL_get_shutdown(ssl_) & SSL_SENT_SHUTDOWN)) SSL_shutdown(ssl_);
        send_gathered();
    }
    gathered_.clear();
    ERR_clear_error();
}

}  // namespace portico::tls
