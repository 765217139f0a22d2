#include "cache/cached_object.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "core/http_date.hpp"
#include "http/header_text.hpp"

namespace portico::cache {

namespace {

// Not stored: hop-by-hop fields, and those the hit or the connection
// writes for itself.
constexpr std::array<std::string_view, 9> unstored = {
    "connection", "keep-alive", "transfer-encoding", "content-length", "date",
    "age",        "set-cookie", "proxy-connection",  "trailer"};

bool stored(std::string_view name) {
    for (std::string_view skip : unstored)
        if (http::equals_ignore_case(name, skip)) return false;
    return true;
}

void parse_fields(CachedObject& object) {
    std::string_view head = object.head();
    while (!head.empty()) {
        size_t name_end = head.find('\n');
        size_t value_end = head.find('\n', name_end + 1);
        if (name_end == std::string_view::npos || value_end == std::string_view::npos) return;
        std::string_view name = head.substr(0, name_end);
        std::string_view value = head.substr(name_end + 1, value_end - name_end - 1);
        if (http::equals_ignore_case(name, "etag")) object.etag = value;
        if (http::equals_ignore_case(name, "last-modified"))
            object.last_modified = core::parse_http_date(value);
        object.fields.emplace_back(name, value);
        head.remove_prefix(value_end + 1);
    }
}

// The body's bytes in a new memfd (see CachedObject::body_file); an
// empty descriptor when one cannot be made or filled.
core::UniqueFd body_file_of(std::string_view body) {
    core::UniqueFd file(::memfd_create("portico-cache-body", MFD_CLOEXEC));
    if (!file) return file;
    while (!body.empty()) {
        ssize_t written = ::write(file.get(), body.data(), body.size());
        if (written <= 0) return core::UniqueFd();
        body.remove_prefix(static_cast<size_t>(written));
    }
    return file;
}

}  // namespace

std::vector<std::string_view> CachedObject::vary_names() const {
    std::vector<std::string_view> names;
    std::string_view rest = head();
    while (!rest.empty()) {
        size_t end = rest.find('\n');
        if (end == std::string_view::npos) break;
        names.push_back(rest.substr(0, end));
        rest.remove_prefix(end + 1);
    }
    return names;
}

std::string serialize_head(const http::HeaderList& fields, std::string_view also_unstored) {
    std::string head;
    for (size_t i = 0; i < fields.size(); ++i) {
        if (!stored(fields.name(i))) continue;
        if (!also_unstored.empty() && http::equals_ignore_case(fields.name(i), also_unstored))
            continue;
        head += fields.name(i);
        head += '\n';
        head += fields.value(i);
        head += '\n';
    }
    return head;
}

WorkerCopies::WorkerCopies(uint64_t budget_bytes) : budget_(budget_bytes) {
    // Each memfd is a descriptor the worker holds: an eighth of what it may
    // open, so client and upstream sockets never run short because of them.
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY)
        max_files_ = std::min<uint64_t>(max_files_, files.rlim_cur / 8);
}

std::shared_ptr<const CachedObject> WorkerCopies::find(Store& store, KeyHash key) {
    ReadObject found;
    if (!store.find(key, found, nullptr)) return nullptr;
    uint64_t id = uint64_t{found.entry} << 32 | found.generation;
    if (auto copy = copies_.find(id); copy != copies_.end() && copy->second.first == &store)
        return copy->second.second;
    auto object = std::make_shared<CachedObject>();
    store.find(key, object->where, &object->bytes);
    parse_fields(*object);
    // A copy that is not kept is sent from memory: a memfd made for one hit
    // would cost more than it saves. A body in a memfd counts twice.
    uint64_t size = object->bytes.size();
    if (size > budget_) return object;
    bool with_file = object->facts().body_bytes > CachedObject::body_file_min_bytes &&
                     max_files_ > 0 && size + object->body().size() <= budget_;
    if (with_file) size += object->body().size();
    // Past the budget the worker forgets its copies (those being sent live
    // on with their responses).
    if (held_ + size > budget_ || (with_file && files_held_ == max_files_)) {
        copies_.clear();
        held_ = 0;
        files_held_ = 0;
    }
    if (with_file) {
        object->body_file = body_file_of(object->body());
        if (object->body_file) ++files_held_;
    }
    held_ += size;
    copies_[id] = {&store, object};
    return object;
}

}  // namespace portico::cache
