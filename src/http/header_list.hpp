// A response's header fields held as copies (a handler's views do not
// outlive its call), in order, for a filter to read and change before they
// go to the client: nginx's headers_out list. Cleared and refilled response
// after response, so its storage is reused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace portico::http {

class HeaderList {
public:
    size_t size() const { return entries_.size(); }
    bool empty() const { return entries_.empty(); }
    std::string_view name(size_t index) const {
        return {text_.data() + entries_[index].name_at, entries_[index].name_size};
    }
    std::string_view value(size_t index) const {
        return {text_.data() + entries_[index].value_at, entries_[index].value_size};
    }
    // The first field named `name` (any case), or size().
    size_t find(std::string_view name) const;

    void add(std::string_view name, std::string_view value);
    // `value` may point into this list.
    void set_value(size_t index, std::string_view value);
    void remove(size_t index);
    void clear() {
        text_.clear();
        entries_.clear();
    }

private:
    struct Entry {
        uint32_t name_at, name_size, value_at, value_size;
    };
    uint32_t append(std::string_view bytes);

    std::string text_;  // names and values, back to back
    std::vector<Entry> entries_;
};

}  // namespace portico::http
