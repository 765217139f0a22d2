// A test that cannot run here says so, and ctest reports it skipped instead
// of passed. Catch v2 has no SKIP: PORTICO_SKIP(reason) prints
//   SKIPPED: <test case>: <reason>
// records it, and returns from the test case; once the run is over, main
// (catch_main.cpp) exits with skip_exit_code if no test failed. ctest runs
// each test case in a process of its own (catch_discover_tests) and reads
// that code as skipped (SKIP_RETURN_CODE, tests/CMakeLists.txt); deploy/
// test.sh lists the reasons after each ctest run. Use it only at the test
// case's own level (it returns from the enclosing function), before or
// after checks, never to pass over a check that could have run.
#pragma once

#include <sstream>
#include <string>

namespace portico::test {

// ctest's SKIP_RETURN_CODE for every Catch test, as for the test scripts.
inline constexpr int skip_exit_code = 77;

// Prints the line above (stdout and stderr) and records the skip.
void mark_skipped(const std::string& reason);

// What main returns: Catch's result, or skip_exit_code when something was
// skipped and nothing failed.
int exit_code_after(int catch_result);

}  // namespace portico::test

#define PORTICO_SKIP(reason)                                       \
    do {                                                           \
        std::ostringstream portico_skip_reason_;                   \
        portico_skip_reason_ << reason;                            \
        ::portico::test::mark_skipped(portico_skip_reason_.str()); \
        return;                                                    \
    } while (false)
