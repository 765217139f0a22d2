#include "http/header_list.hpp"

#include <algorithm>
#include <cstring>

#include "http/header_text.hpp"

namespace portico::http {

size_t HeaderList::find(std::string_view name) const {
    for (size_t index = 0; index < entries_.size(); ++index)
        if (entries_[index].name_size == name.size() && equals_ignore_case(this->name(index), name))
            return index;
    return entries_.size();
}

char* HeaderList::room(size_t size, std::string_view& a, std::string_view& b) {
    if (used_ + size > capacity_) [[unlikely]] {
        // Grown (rarely: the capacity stays from response to response), and
        // the views into the old text follow it.
        size_t capacity = std::max<size_t>({2 * capacity_, used_ + size, 512});
        auto grown = std::make_unique<char[]>(capacity);
        if (used_ > 0) std::memcpy(grown.get(), text_.get(), used_);
        auto old_begin = reinterpret_cast<uintptr_t>(text_.get());
        uintptr_t old_end = old_begin + used_;
        auto moved = [&](const char* at) {
            auto address = reinterpret_cast<uintptr_t>(at);
            return address >= old_begin && address < old_end ? grown.get() + (address - old_begin)
                                                             : at;
        };
        for (Entry& entry : entries_) {
            entry.name = moved(entry.name);
            entry.value = moved(entry.value);
        }
        a = {moved(a.data()), a.size()};
        b = {moved(b.data()), b.size()};
        text_ = std::move(grown);
        capacity_ = capacity;
    }
    char* at = text_.get() + used_;
    used_ += size;
    return at;
}

void HeaderList::add(std::string_view name, std::string_view value) {
    char* at = room(name.size() + value.size(), name, value);
    if (!name.empty()) std::memcpy(at, name.data(), name.size());
    if (!value.empty()) std::memcpy(at + name.size(), value.data(), value.size());
    entries_.push_back({at, at + name.size(), static_cast<uint32_t>(name.size()),
                        static_cast<uint32_t>(value.size())});
}

void HeaderList::set_value(size_t index, std::string_view value) {
    std::string_view none;
    char* at = room(value.size(), value, none);
    if (!value.empty()) std::memcpy(at, value.data(), value.size());
    entries_[index].value = at;
    entries_[index].value_size = static_cast<uint32_t>(value.size());
}

void HeaderList::remove(size_t index) {
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(index));
}

}  // namespace portico::http
