#include "convert/nginx_parser.hpp"

#include <glob.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace portico::convert {

namespace {

// Deeper than any real config, shallow enough to stop an include loop.
constexpr int max_include_depth = 16;

struct ParseError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class TokenKind { word, semicolon, open, close, end };

struct Token {
    TokenKind kind = TokenKind::end;
    std::string text;
    int line = 0;
};

// nginx's ngx_conf_read_token: words end at whitespace, ';', '{' or '}';
// "..." and '...' hold anything; '#' at a word's start runs to the line's
// end; a backslash escapes the next character; "${name}" is a variable,
// not a block.
class Tokenizer {
public:
    Tokenizer(const std::string& text, const std::string& file) : text_(text), file_(file) {}

    Token next() {
        skip_space_and_comments();
        Token token;
        token.line = line_;
        if (at_ >= text_.size()) return token;
        char c = text_[at_];
        if (c == ';' || c == '{' || c == '}') {
            ++at_;
            token.kind =
                c == ';' ? TokenKind::semicolon : (c == '{' ? TokenKind::open : TokenKind::close);
            return token;
        }
        token.kind = TokenKind::word;
        token.text = c == '"' || c == '\'' ? quoted(c) : bare();
        return token;
    }

    // The body of a `*_by_lua_block { ... }`, Lua rather than nginx syntax
    // (the Lua module reads it itself): skipped up to its closing brace.
    void skip_lua_block(int start_line) {
        int depth = 1;
        char quote = 0;
        while (at_ < text_.size()) {
            char c = text_[at_++];
            if (c == '\n') ++line_;
            if (quote) {
                if (c == '\\')
                    ++at_;
                else if (c == quote)
                    quote = 0;
            } else if (c == '"' || c == '\'') {
                quote = c;
            } else if (c == '{') {
                ++depth;
            } else if (c == '}' && --depth == 0) {
                return;
            }
        }
        fail(start_line, "unexpected end of file in a Lua block");
    }

    [[noreturn]] void fail(int line, const std::string& message) const {
        throw ParseError(file_ + ":" + std::to_string(line) + ": " + message);
    }

private:
    void skip_space_and_comments() {
        while (at_ < text_.size()) {
            char c = text_[at_];
            if (c == '#') {
                while (at_ < text_.size() && text_[at_] != '\n') ++at_;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                if (c == '\n') ++line_;
                ++at_;
            } else {
                return;
            }
        }
    }

    // The escapes nginx turns into characters; any other backslash stays
    // (a regex's "\d" reaches the regex as written).
    void take_escape(std::string& out) {
        if (at_ + 1 >= text_.size()) fail(line_, "unexpected end of file after '\\'");
        char next = text_[at_ + 1];
        switch (next) {
        case '"':
        case '\'':
        case '\\':
            out += next;
            break;
        case 't':
            out += '\t';
            break;
        case 'r':
            out += '\r';
            break;
        case 'n':
            out += '\n';
            break;
        default:
            out += '\\';
            out += next;
            if (next == '\n') ++line_;
        }
        at_ += 2;
    }

    std::string quoted(char quote) {
        int start_line = line_;
        std::string out;
        ++at_;
        while (true) {
            if (at_ >= text_.size()) fail(start_line, "unterminated quoted string");
            char c = text_[at_];
            if (c == '\\') {
                take_escape(out);
            } else if (c == quote) {
                ++at_;
                break;
            } else {
                if (c == '\n') ++line_;
                out += c;
                ++at_;
            }
        }
        // nginx wants a separator after a quoted string.
        if (at_ < text_.size() &&
            std::string_view(" \t\r\n;{").find(text_[at_]) == std::string_view::npos)
            fail(line_, "unexpected \"" + std::string(1, text_[at_]) + "\" after a quoted string");
        return out;
    }

    std::string bare() {
        std::string out;
        while (at_ < text_.size()) {
            char c = text_[at_];
            if (c == '\\') {
                take_escape(out);
                continue;
            }
            if (c == '{' && !out.empty() && out.back() == '$') {
                size_t close = text_.find('}', at_);
                if (close == std::string::npos) fail(line_, "unterminated variable \"${\"");
                out.append(text_, at_, close + 1 - at_);
                at_ = close + 1;
                continue;
            }
            if (std::string_view(" \t\r\n;{}").find(c) != std::string_view::npos) break;
            if ((c == '"' || c == '\'') && out.empty()) break;
            out += c;
            ++at_;
        }
        return out;
    }

    const std::string& text_;
    const std::string& file_;
    size_t at_ = 0;
    int line_ = 1;
};

bool read_whole_file(const std::string& path, std::string& out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::ostringstream text;
    text << in.rdbuf();
    out = text.str();
    return true;
}

class Parser {
public:
    Parser(std::string prefix, ParsedConfig& result)
        : prefix_(std::move(prefix)), result_(result) {}

    std::vector<Directive> parse(const std::string& text, const std::string& file, int depth) {
        Tokenizer tokens(text, file);
        std::vector<Directive> top = block(tokens, file, depth, false);
        return top;
    }

private:
    std::vector<Directive> block(Tokenizer& tokens, const std::string& file, int depth,
                                 bool nested) {
        std::vector<Directive> out;
        while (true) {
            Token token = tokens.next();
            if (token.kind == TokenKind::end) {
                if (nested) tokens.fail(token.line, "unexpected end of file, expecting \"}\"");
                return out;
            }
            if (token.kind == TokenKind::close) {
                if (!nested) tokens.fail(token.line, "unexpected \"}\"");
                return out;
            }
            if (token.kind != TokenKind::word) tokens.fail(token.line, "unexpected \";\" or \"{\"");
            Directive directive;
            directive.name = token.text;
            directive.source = {file, token.line};
            while (true) {
                Token arg = tokens.next();
                if (arg.kind == TokenKind::word) {
                    directive.args.push_back(arg.text);
                } else if (arg.kind == TokenKind::semicolon) {
                    break;
                } else if (arg.kind == TokenKind::open) {
                    directive.has_block = true;
                    if (directive.name.ends_with("_by_lua_block"))
                        tokens.skip_lua_block(arg.line);
                    else
                        directive.block = block(tokens, file, depth, true);
                    break;
                } else {
                    tokens.fail(arg.line,
                                "directive \"" + directive.name + "\" is not terminated by \";\"");
                }
            }
            if (directive.name == "include" && !directive.has_block) {
                include(directive, depth, out);
            } else {
                out.push_back(std::move(directive));
            }
        }
    }

    void refuse(const Directive& directive, std::string why) {
        result_.refusals.push_back({directive.source, directive.text(), std::move(why)});
    }

    void include(const Directive& directive, int depth, std::vector<Directive>& out) {
        if (directive.args.size() != 1) return refuse(directive, "expects one file or pattern");
        if (depth >= max_include_depth) return refuse(directive, "includes nested too deep");
        std::string pattern = directive.args[0];
        if (!pattern.starts_with('/')) pattern = prefix_ + "/" + pattern;
        std::vector<std::string> files;
        if (pattern.find_first_of("*?[") != std::string::npos) {
            glob_t found{};
            if (glob(pattern.c_str(), 0, nullptr, &found) == 0) {
                for (size_t i = 0; i < found.gl_pathc; ++i) files.push_back(found.gl_pathv[i]);
            }
            globfree(&found);
            std::sort(files.begin(), files.end());  // nginx reads them in name order
        } else {
            files.push_back(pattern);
        }
        for (const std::string& path : files) {
            std::string text;
            if (!read_whole_file(path, text)) {
                refuse(directive, "cannot read " + path + " (the rest is converted without it)");
                continue;
            }
            std::vector<Directive> included = parse(text, path, depth + 1);
            for (Directive& inner : included) out.push_back(std::move(inner));
        }
    }

    std::string prefix_;
    ParsedConfig& result_;
};

std::string quoted_if_needed(const std::string& arg) {
    if (!arg.empty() && arg.find_first_of(" \t\r\n;{}\"'#") == std::string::npos) return arg;
    std::string out = "\"";
    for (char c : arg) {
        if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (c == '\r')
            out += "\\r";
        else
            out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    }
    return out + "\"";
}

}  // namespace

std::string Directive::text() const {
    std::string out = name;
    for (const std::string& arg : args) out += " " + quoted_if_needed(arg);
    return out;
}

ParsedConfig parse_nginx_text(const std::string& text, const std::string& file,
                              const std::string& prefix) {
    ParsedConfig result;
    try {
        Parser parser(prefix, result);
        result.top = parser.parse(text, file, 0);
    } catch (const ParseError& error) {
        result.error = error.what();
        result.top.clear();
    }
    return result;
}

ParsedConfig parse_nginx_file(const std::string& file, const std::string& prefix) {
    std::string text;
    if (!read_whole_file(file, text)) {
        ParsedConfig result;
        result.error = file + ": cannot read the file";
        return result;
    }
    return parse_nginx_text(text, file, prefix);
}

}  // namespace portico::convert
