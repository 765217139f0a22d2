// A location's `compress`, `precompressed` and `gzip_static` keys.
#include <algorithm>
#include <cctype>

#include "config/sections.hpp"

namespace portico::config {

namespace {

// "type/subtype" or "type/*" (RFC 9110 8.3.1); parameters are not part of
// what is matched.
bool is_media_range(std::string_view text) {
    size_t slash = text.find('/');
    if (slash == std::string_view::npos) return false;
    std::string_view type = text.substr(0, slash);
    std::string_view subtype = text.substr(slash + 1);
    return is_token(type) && type != "*" && (subtype == "*" || is_token(subtype));
}

std::string lowercase(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

void read_types(TableReader& reader, CompressConfig& compress) {
    std::vector<std::string> types;
    if (!reader.read_string_array("types", types)) return;
    if (types.empty()) {
        reader.wrong("types", "a non-empty array of media types (compress = false turns it off)");
        return;
    }
    for (std::string& type : types) {
        if (!is_media_range(type)) {
            reader.report("types", *reader.get("types"),
                          "\"" + type + "\" is not a media type like \"text/css\" or \"text/*\"");
            return;
        }
        type = lowercase(std::move(type));
    }
    compress.types = std::move(types);
}

void read_compress_table(const toml::table& table, const std::string& label,
                         Diagnostics& diagnostics, CompressConfig& compress) {
    TableReader reader(table, label + ": compress.", "compress of " + label, diagnostics);
    read_types(reader, compress);
    reader.read_size("min_length", compress.min_length, 0, uint64_t{1} << 40);
    // The ranges each library takes; brotli's 0 and zstd's 19 are legal but
    // slow on the fly.
    reader.read_bounded("gzip_level", compress.gzip_level, 1, 9);
    reader.read_bounded("brotli_level", compress.brotli_level, 0, 11);
    reader.read_bounded("zstd_level", compress.zstd_level, 1, 19);
    reader.finish();
}

void read_compress(TableReader& reader, const std::string& label, Diagnostics& diagnostics,
                   LocationConfig& location) {
    const toml::node* node = reader.get("compress");
    if (!node) return;
    if (const auto* flag = node->as_boolean()) {
        if (flag->get()) location.compress = CompressConfig{};
        return;
    }
    if (const toml::table* table = node->as_table()) {
        CompressConfig compress;
        read_compress_table(*table, label, diagnostics, compress);
        location.compress = std::move(compress);
        return;
    }
    reader.wrong("compress", *node,
                 "true, false, or a table like { types = [\"text/*\"], min_length = 256 }");
}

void read_precompressed(TableReader& reader, LocationConfig& location) {
    const toml::node* node = reader.get("precompressed");
    if (!node) return;
    const toml::array* array = node->as_array();
    if (!array) {
        reader.wrong("precompressed", *node, "an array like [\"br\", \"zstd\", \"gzip\"]");
        return;
    }
    CodingSet codings;
    for (const toml::node& element : *array) {
        const auto* text = element.as_string();
        auto known = std::find_if(codings_by_preference.begin(), codings_by_preference.end(),
                                  [text](Coding coding) {
                                      return text && text->get() == coding_name(coding);
                                  });
        if (known == codings_by_preference.end()) {
            reader.wrong("precompressed", element, "one of \"br\", \"zstd\", \"gzip\"");
            return;
        }
        if (codings.contains(*known)) {
            reader.report("precompressed", element,
                          "\"" + text->get() + "\" is listed twice");
            return;
        }
        codings.add(*known);
    }
    location.precompressed = codings;
}

}  // namespace

void read_compression(TableReader& reader, const std::string& label, Diagnostics& diagnostics,
                      LocationConfig& location) {
    read_compress(reader, label, diagnostics, location);
    const toml::node* gzip_static = reader.get("gzip_static");
    const toml::node* precompressed = reader.get("precompressed");
    if (gzip_static && precompressed) {
        // Two spellings of one setting: which one wins would be a guess.
        reader.report("gzip_static", *gzip_static,
                      "is the older spelling of precompressed = [\"gzip\"]; keep one of the two");
        return;
    }
    read_precompressed(reader, location);
    bool gzip = false;
    if (reader.read_bool("gzip_static", gzip) && gzip) location.precompressed.add(Coding::gzip);
}

}  // namespace portico::config
