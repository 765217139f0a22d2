// nginx's configuration syntax, read into a tree of directives: words,
// quoted strings with nginx's escapes, comments, blocks, and `include`
// (globs too) spliced in place, resolved against a prefix folder.
#pragma once

#include <string>
#include <vector>

namespace portico::convert {

// Where a directive was written, for the comments and refusals that name it.
struct Source {
    std::string file;
    int line = 0;
    std::string to_string() const { return file + ":" + std::to_string(line); }
};

struct Directive {
    std::string name;
    std::vector<std::string> args;  // unquoted, escapes applied
    bool has_block = false;
    std::vector<Directive> block;
    Source source;

    // "location /api/": the name and arguments as written in a comment.
    std::string text() const;
};

// A directive that could not be taken in (a missing include), reported and
// skipped while the rest is still read.
struct Refusal {
    Source source;
    std::string directive;
    std::string why;
    std::string to_string() const { return source.to_string() + ": " + directive + ": " + why; }
};

struct ParsedConfig {
    std::vector<Directive> top;
    std::vector<Refusal> refusals;
    std::string error;  // "FILE:LINE: message" when the file cannot be read or parsed
};

// The tree of `text`, named `file` in sources; includes resolved against
// `prefix`.
ParsedConfig parse_nginx_text(const std::string& text, const std::string& file,
                              const std::string& prefix);
ParsedConfig parse_nginx_file(const std::string& file, const std::string& prefix);

}  // namespace portico::convert
