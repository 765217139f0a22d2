#include "cache/cached_object.hpp"

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

std::shared_ptr<const CachedObject> WorkerCopies::find(Store& store, KeyHash key) {
    ReadObject found;
    if (!store.find(key, found, nullptr)) return nullptr;
    uint64_t id = uint64_t{found.entry} << 32 | found.generation;
    if (auto copy = copies_.find(id); copy != copies_.end() && copy->second.first == &store)
        return copy->second.second;
    auto object = std::make_shared<CachedObject>();
    store.find(key, object->where, &object->bytes);
    parse_fields(*object);
    // Past the budget the worker forgets its copies (those being sent live
    // on with their responses).
    if (held_ + object->bytes.size() > budget_) {
        copies_.clear();
        held_ = 0;
    }
    if (object->bytes.size() <= budget_) {
        held_ += object->bytes.size();
        copies_[id] = {&store, object};
    }
    return object;
}

}  // namespace portico::cache
