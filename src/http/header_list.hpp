// A response's header fields, in order, for a filter to read and change
// before they go to the client: nginx's headers_out list. What a handler
// adds is copied (its views do not outlive its call); what lasts the
// response anyway (a literal) is kept as a view. Cleared and refilled
// response after response, so its storage is reused.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace portico::http {

class HeaderList {
public:
    size_t size() const { return entries_.size(); }
    bool empty() const { return entries_.empty(); }
    std::string_view name(size_t index) const {
        return {entries_[index].name, entries_[index].name_size};
    }
    std::string_view value(size_t index) const {
        return {entries_[index].value, entries_[index].value_size};
    }
    // The first field named `name` (any case), or size().
    size_t find(std::string_view name) const;

    // Copied: `name` and `value` may go once this returns (or point into
    // this list).
    void add(std::string_view name, std::string_view value);
    // Kept as views: both outlive the response (literals, the config's text).
    void add_lasting(std::string_view name, std::string_view value) {
        entries_.push_back({name.data(), value.data(), static_cast<uint32_t>(name.size()),
                            static_cast<uint32_t>(value.size())});
    }
    // Copied, as add's.
    void set_value(size_t index, std::string_view value);
    void remove(size_t index);
    void clear() {
        used_ = 0;
        entries_.clear();
    }

private:
    struct Entry {
        const char* name;
        const char* value;
        uint32_t name_size, value_size;
    };
    // `size` bytes of room in text_, which moves only when it grows: the
    // entries move with it, and so do `a` and `b` when they point into it.
    char* room(size_t size, std::string_view& a, std::string_view& b);

    std::unique_ptr<char[]> text_;  // the copies, back to back
    size_t used_ = 0;
    size_t capacity_ = 0;
    std::vector<Entry> entries_;
};

}  // namespace portico::http
