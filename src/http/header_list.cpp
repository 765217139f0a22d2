#include "http/header_list.hpp"

#include "http/header_text.hpp"

namespace portico::http {

size_t HeaderList::find(std::string_view name) const {
    for (size_t index = 0; index < entries_.size(); ++index)
        if (entries_[index].name_size == name.size() && equals_ignore_case(this->name(index), name))
            return index;
    return entries_.size();
}

uint32_t HeaderList::append(std::string_view bytes) {
    // Appending may move the text: a view into it is copied first.
    if (bytes.data() >= text_.data() && bytes.data() < text_.data() + text_.size()) {
        std::string copy(bytes);
        return append(copy);
    }
    auto at = static_cast<uint32_t>(text_.size());
    text_.append(bytes);
    return at;
}

void HeaderList::add(std::string_view name, std::string_view value) {
    uint32_t name_at = append(name);
    uint32_t value_at = append(value);
    entries_.push_back({name_at, static_cast<uint32_t>(name.size()), value_at,
                        static_cast<uint32_t>(value.size())});
}

void HeaderList::set_value(size_t index, std::string_view value) {
    uint32_t value_at = append(value);
    entries_[index].value_at = value_at;
    entries_[index].value_size = static_cast<uint32_t>(value.size());
}

void HeaderList::remove(size_t index) {
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(index));
}

}  // namespace portico::http
