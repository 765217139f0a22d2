// Compressed variants of stored objects, "stored once per coding": a hit
// to a client that accepts gzip, br or zstd is compressed by the
// location's compression filter the first time only. This filter sits
// behind that one (between it and the client): for a hit whose coded
// variant is not stored yet, it keeps what the compression filter made
// (its head: Content-Encoding, Vary: Accept-Encoding, the weak ETag, the
// compressed length; its whole body) and stores it beside the identity
// object, under a key derived from the identity's and the coding. The
// next hits of that coding, in any worker, answer the stored coded bytes
// (cache_handler.cpp); they pass the compression filter untouched (it
// never codes an encoded response), so the filter's rules are written
// once, in compress/, and a variant is exactly what it would send.
//
// A variant names the identity it was made from (its entry and
// generation): it is served only while that object is the one stored, and
// a new identity object drops its variants at once (drop_coded_variants);
// a purge drops them with it (they carry its key text). They are ordinary
// objects of the zone: within its memory, evicted least recently used.
//
// Only fresh hits use variants. HEAD and Range requests get the identity,
// as the compression filter leaves them (a range counts the identity's
// bytes), and so do stale answers, which the filter compresses as before.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cache/location_cache.hpp"
#include "config/coding.hpp"
#include "http/response_filter.hpp"

namespace portico::cache {

// Where the coded variant of the identity object stored under `identity` is.
KeyHash coded_key(KeyHash identity, config::Coding coding);
// Removes every coded variant of that identity (the store's lock held).
void drop_coded_variants(Store& store, KeyHash identity);

class VariantStream final : public http::FilterStream {
public:
    explicit VariantStream(LocationCache& cache) : cache_(cache) {}

    const http::Request* request() const { return request_; }
    // A fresh hit on `identity` (stored under `identity_key`): its coded
    // variant for the coding the client gets, when stored, to answer on
    // past_compression(); otherwise nullptr, and what the compression
    // filter makes of the identity is stored.
    std::shared_ptr<const CachedObject> coded_variant(
        const std::shared_ptr<const CachedObject>& identity, KeyHash identity_key);
    // The exchange after this stream, for a response in its final coding
    // already: `compressing` (the compression filter's exchange) and this
    // stream's are given back, so the hit costs neither filter's work.
    http::Exchange& past_compression(http::Exchange& compressing);

    bool start(const http::Request& request) override;
    void head(http::HeadersOut& head) override;
    void body(http::BodyPart& part) override;
    void end() override;
    void abort() override;

private:
    void store();
    void stop();

    LocationCache& cache_;
    const http::Request* request_ = nullptr;
    std::string_view accept_encoding_;  // the request's, when it is compressible
    // The variant being filled: for this coding, from this identity.
    bool filling_ = false;
    config::Coding coding_ = config::Coding::gzip;
    KeyHash identity_key_;
    std::shared_ptr<const CachedObject> identity_;
    uint64_t length_ = 0;  // of the coded body, as its head says
    std::string head_;
    std::string body_;
};

class VariantFilter final : public http::ResponseFilter {
public:
    explicit VariantFilter(LocationCache& cache) : cache_(cache) {}

protected:
    std::unique_ptr<http::FilterStream> new_stream() override {
        return std::make_unique<VariantStream>(cache_);
    }

private:
    LocationCache& cache_;
};

}  // namespace portico::cache
