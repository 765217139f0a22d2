#include "cache/variant_stream.hpp"

#include <array>
#include <cstring>

#include "http/accept_encoding.hpp"
#include "http/header_text.hpp"

namespace portico::cache {

namespace {

bool has_content_coding(const CachedObject& object) {
    for (const auto& [name, value] : object.fields)
        if (http::equals_ignore_case(name, "content-encoding")) return true;
    return false;
}

std::string_view content_coding(const http::HeaderList& fields) {
    for (size_t i = 0; i < fields.size(); ++i)
        if (http::equals_ignore_case(fields.name(i), "content-encoding")) return fields.value(i);
    return {};
}

}  // namespace

KeyHash coded_key(KeyHash identity, config::Coding coding) {
    // The identity's hash and the coding, hashed again: never a key's hash
    // (those hash key text), and apart for every identity and coding.
    std::array<char, 2 * sizeof(uint64_t) + 7> text{};
    std::memcpy(text.data(), &identity.low, sizeof identity.low);
    std::memcpy(text.data() + sizeof identity.low, &identity.high, sizeof identity.high);
    std::memcpy(text.data() + 2 * sizeof(uint64_t), "coded", 5);
    text[text.size() - 1] = static_cast<char>(coding);
    return hash_key(std::string_view(text.data(), text.size()));
}

void drop_coded_variants(Store& store, KeyHash identity) {
    for (config::Coding coding : config::codings_by_preference)
        store.erase(coded_key(identity, coding));
}

bool VariantStream::start(const http::Request& request) {
    // Only a request the compression filter may code for has variants:
    // the others (no Accept-Encoding, HEAD, Range) pass by at the cost of
    // this look at its headers. The coding is negotiated for a hit only.
    request_ = &request;
    accept_encoding_ = {};
    if (request.method_name == "GET") {
        http::CompressibleRequest compressible = http::compressible_request(request);
        if (compressible.compressible) accept_encoding_ = compressible.accept_encoding;
    }
    bool takes = !accept_encoding_.empty();
    cache_.variant_started = takes ? this : nullptr;
    return takes;
}

std::shared_ptr<const CachedObject> VariantStream::coded_variant(
    const std::shared_ptr<const CachedObject>& identity, KeyHash identity_key) {
    // The coding the compression filter gives the request: the same choice.
    std::optional<config::Coding> coding =
        http::negotiate_coding(accept_encoding_, config::CodingSet::all());
    // Stored encoded already (the upstream's gzip): the filter leaves it.
    if (!coding || has_content_coding(*identity)) return nullptr;
    std::shared_ptr<const CachedObject> coded;
    {
        core::SharedLock lock(cache_.store.mutex());
        coded = cache_.copies.find(cache_.store, coded_key(identity_key, *coding));
    }
    if (coded && coded->facts().coded_from_entry == identity->where.entry &&
        coded->facts().coded_from_generation == identity->where.generation)
        return coded;
    filling_ = true;
    coding_ = *coding;
    identity_key_ = identity_key;
    identity_ = identity;
    return nullptr;
}

http::Exchange& VariantStream::past_compression(http::Exchange& compressing) {
    // Both streams took the request: the compression filter takes every
    // compressible_request, this stream those of them with an
    // Accept-Encoding.
    return cache_.variant_filter->unwrap_taken(
        cache_.compression_filter->unwrap_taken(compressing));
}

void VariantStream::head(http::HeadersOut& head) {
    // Stored when the compression filter compressed the body whole: a 200
    // of known length in the coding negotiated (not a 304, nor a type or a
    // size it leaves as it is, nor an encoder that failed).
    if (filling_) {
        if (head.status == 200 && head.length && *head.length <= cache_.store.max_object_bytes() &&
            content_coding(head.fields) == config::coding_name(coding_)) {
            length_ = *head.length;
            head_ = serialize_head(head.fields, cache_.config.status_header);
        } else {
            stop();
        }
    }
    next().head(head);
}

void VariantStream::body(http::BodyPart& part) {
    if (filling_) {
        if (part.kind == http::BodyPart::Kind::file) {
            stop();
        } else {
            for (std::string_view piece : part.pieces) body_ += piece;
            if (part.last) store();
        }
    }
    next().body(part);
}

void VariantStream::end() {
    if (filling_) store();
    next().end();
}

void VariantStream::abort() {
    stop();
}

void VariantStream::store() {
    if (body_.size() != length_) {
        stop();
        return;
    }
    const CachedObject& identity = *identity_;
    std::string_view key = identity.key();
    ObjectFacts facts = identity.facts();
    facts.coded_from_entry = identity.where.entry;
    facts.coded_from_generation = identity.where.generation;
    facts.key_bytes = static_cast<uint32_t>(key.size());
    facts.head_bytes = static_cast<uint32_t>(head_.size());
    facts.body_bytes = body_.size();
    std::array<std::string_view, 3> parts = {key, head_, body_};
    {
        core::SharedLock lock(cache_.store.mutex());
        // Only beside the object it was made from: another may have
        // replaced it meanwhile (a refresh in another worker).
        ReadObject now;
        if (cache_.store.find(identity_key_, now, nullptr) && now.entry == identity.where.entry &&
            now.generation == identity.where.generation)
            cache_.store.insert(coded_key(identity_key_, coding_), facts, parts);
    }
    stop();
}

void VariantStream::stop() {
    filling_ = false;
    identity_.reset();
    head_.clear();
    body_.clear();
}

}  // namespace portico::cache
