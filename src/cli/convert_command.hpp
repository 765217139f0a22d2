// `portico convert [--prefix DIR] FILE`: the nginx config FILE as a portico
// config on stdout, every directive that could not be translated on
// stderr as FILE:LINE: directive: why (docs/convert.md).
#pragma once

namespace portico::cli {

// argv[0] is "convert". Returns the exit code: 0 all translated, 2 written
// with refusals, 1 nothing written (usage, unreadable or unparsable file,
// nothing to translate).
int run_convert_command(int argc, char** argv);

}  // namespace portico::cli
