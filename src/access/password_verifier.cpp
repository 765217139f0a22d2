#include "access/password_verifier.hpp"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstring>
#include <memory>

#include "access/apr1.hpp"
#include "config/htpasswd.hpp"
#include "core/log.hpp"

namespace portico::access {

struct PasswordVerifier::Job {
    uv_work_t work{};
    PasswordVerifier* owner;  // nullptr once the verifier is gone
    Key key;
    std::string password;
    std::string hash;  // the entry's, copied: the thread reads it
    bool right = false;
    struct Waiter {
        http::Waiting* waiting;
        const PasswordWaiter* waiter;
    };
    std::vector<Waiter> waiters;

    ~Job() { OPENSSL_cleanse(password.data(), password.size()); }
};

namespace {

// Equal lengths and bytes, in a time that does not depend on where they
// first differ.
bool same_hash(std::string_view computed, std::string_view expected) {
    return computed.size() == expected.size() &&
           CRYPTO_memcmp(computed.data(), expected.data(), expected.size()) == 0;
}

// On a pool thread.
bool check_password(const std::string& password, const std::string& hash) {
    if (config::hash_kind(hash) == config::HashKind::apache_md5) {
        std::string_view salt = std::string_view(hash).substr(6);
        salt = salt.substr(0, salt.find('$'));
        std::string computed = apr1_hash(password, salt);
        bool right = same_hash(computed, hash);
        OPENSSL_cleanse(computed.data(), computed.size());
        return right;
    }
    // bcrypt and SHA-crypt: libxcrypt's crypt_rn, reentrant (the pool runs
    // several at once); its state is 32 KiB, too much for a thread's stack.
    auto data = std::make_unique<crypt_data>();
    const char* computed = crypt_rn(password.c_str(), hash.c_str(), data.get(), sizeof *data);
    bool right = computed != nullptr && same_hash(computed, hash);
    OPENSSL_cleanse(data.get(), sizeof *data);
    return right;
}

}  // namespace

PasswordVerifier::~PasswordVerifier() {
    // The loop has run every job by now (the worker's last uv_run waits for
    // them); one that has not is left to free itself.
    for (auto& [key, job] : pending_) job->owner = nullptr;
}

size_t PasswordVerifier::KeyHash::operator()(const Key& key) const {
    size_t value = 0;
    std::memcpy(&value, key.data(), sizeof value);
    return value;
}

PasswordVerifier::Key PasswordVerifier::key_of(std::string_view password,
                                               const config::HtpasswdEntry& entry) {
    // Each part after its length: no two (user, hash, password) give the same input.
    EVP_MD_CTX* context = EVP_MD_CTX_new();
    EVP_DigestInit_ex(context, EVP_sha256(), nullptr);
    for (std::string_view part :
         {std::string_view(entry.user), std::string_view(entry.hash), password}) {
        uint64_t size = part.size();
        EVP_DigestUpdate(context, &size, sizeof size);
        EVP_DigestUpdate(context, part.data(), part.size());
    }
    Key key{};
    EVP_DigestFinal_ex(context, key.data(), nullptr);
    EVP_MD_CTX_free(context);
    return key;
}

PasswordVerifier::Answer PasswordVerifier::verify(std::string_view password,
                                                  const config::HtpasswdEntry& entry,
                                                  http::Admission& admission,
                                                  const PasswordWaiter& waiter) {
    Key key = key_of(password, entry);
    if (auto found = remembered_.find(key); found != remembered_.end()) {
        if (found->second.until_ms > uv_now(loop_))
            return found->second.right ? Answer::right : Answer::wrong;
        remembered_.erase(found);
    }
    if (auto running = pending_.find(key); running != pending_.end()) {
        running->second->waiters.push_back({&admission.hold(), &waiter});
        return Answer::later;
    }
    if (pending_.size() >= max_hashes_in_flight) {
        uint64_t left_out = 0;
        if (busy_log_.allow(uv_now(loop_), left_out))
            log::warn(
                "basic auth: {} password hashes are being computed already; requests that need "
                "one more are answered 503 ({} more since the last line)",
                max_hashes_in_flight, left_out);
        return Answer::busy;
    }
    auto job = std::make_unique<Job>();
    job->owner = this;
    job->key = key;
    job->password = password;
    job->hash = entry.hash;
    job->work.data = job.get();
    if (int error = uv_queue_work(loop_, &job->work, compute, computed); error != 0) {
        log::error("basic auth: cannot start a password hash: {}", uv_strerror(error));
        return Answer::busy;
    }
    // Its answer comes on a later turn of the loop, never before this returns.
    job->waiters.push_back({&admission.hold(), &waiter});
    pending_.emplace(key, job.release());
    // Once per credentials within the remembered time: what the tests count.
    log::debug("basic auth: computing the password hash of user '{}' ({} in flight)", entry.user,
               pending_.size());
    return Answer::later;
}

void PasswordVerifier::compute(uv_work_t* work) {
    auto& job = *static_cast<Job*>(work->data);
    job.right = check_password(job.password, job.hash);
}

void PasswordVerifier::computed(uv_work_t* work, int status) {
    std::unique_ptr<Job> job(static_cast<Job*>(work->data));
    PasswordVerifier* self = job->owner;
    if (self == nullptr) return;
    self->pending_.erase(job->key);
    bool right = status == 0 && job->right;
    self->remember(job->key, right);
    for (const Job::Waiter& waiter : job->waiters)
        waiter.waiter->on_verified(*waiter.waiting, right);
}

void PasswordVerifier::remember(const Key& key, bool right) {
    uint64_t now = uv_now(loop_);
    if (remembered_.size() >= max_remembered) {
        // Full: the expired go first, else any one (a hash computed again
        // later is the only cost).
        std::erase_if(remembered_,
                      [now](const auto& entry) { return entry.second.until_ms <= now; });
        if (remembered_.size() >= max_remembered) remembered_.erase(remembered_.begin());
    }
    remembered_[key] = {right, now + (right ? right_for_ms : wrong_for_ms)};
}

}  // namespace portico::access
