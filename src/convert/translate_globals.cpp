// What portico has once for the whole server but nginx allows at any level:
// client_max_body_size, keepalive_timeout, access_log. A location sees the
// value in force; a second, different one is refused.
#include "convert/conversion.hpp"
#include "convert/nginx_values.hpp"
#include "convert/toml_text.hpp"

namespace portico::convert {

namespace {

void body_size(Conversion& conversion, const Scope& scope) {
    const Directive* directive = last_in(scope, "client_max_body_size");
    std::string value = "1048576";  // nginx's default, 1m
    if (directive) {
        std::optional<unsigned long long> bytes =
            directive->args.size() == 1 ? nginx_size(directive->args[0]) : std::nullopt;
        if (!bytes) return conversion.refuse(*directive, "expects a size");
        // 0 is nginx's "no limit": the largest size TOML can say.
        value = *bytes == 0 ? "9223372036854775807" : std::to_string(*bytes);
    }
    conversion.set_global(conversion.out.server, "max_body_bytes", value, directive);
}

void keepalive(Conversion& conversion, const Scope& scope) {
    const Directive* directive = last_in(scope, "keepalive_timeout");
    std::string value = "\"75s\"";
    if (directive) {
        std::optional<std::string> duration =
            directive->args.empty() ? std::nullopt : portico_duration(directive->args[0]);
        if (!duration) return conversion.refuse(*directive, "expects a time");
        value = toml_string(*duration);
        if (directive->args.size() > 1)
            conversion.note(conversion.out.server, *directive,
                            "the Keep-Alive: timeout header is not sent by portico");
    }
    conversion.set_global(conversion.out.server, "keepalive_timeout", value, directive);
}

void access_log(Conversion& conversion, const Scope& scope) {
    const Directive* directive = last_in(scope, "access_log");
    if (!directive || directive->args.empty()) return;
    const std::string& target = directive->args[0];
    if (target == "off") {
        conversion.set_global(conversion.out.log, "access", toml_string("off"), directive);
        return;
    }
    if (directive->args.size() > 1 && directive->args[1] != "combined") {
        return conversion.refuse(*directive,
                                 "portico writes the combined or json format, not "
                                 "log_format " +
                                     directive->args[1]);
    }
    if (target.starts_with("syslog:"))
        return conversion.refuse(*directive, "portico logs to a file or stdout");
    std::string file = target == "/dev/stdout" ? "stdout" : conversion.absolute(target);
    conversion.set_global(conversion.out.log, "access", toml_string(file), directive);
    conversion.note(conversion.out.log, *directive,
                    "portico's combined line adds its timings (rt=, urt=, loc=...) at the end");
}

}  // namespace

void translate_globals(Conversion& conversion, const Scope& scope) {
    body_size(conversion, scope);
    keepalive(conversion, scope);
    access_log(conversion, scope);
}

}  // namespace portico::convert
