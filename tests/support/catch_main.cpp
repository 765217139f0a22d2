// Catch's main, compiled once for both test binaries: it is the costliest
// file of the suite to compile (about 50 s at -O2 -g here). Its own main
// turns a run with skipped tests (skip.hpp) into ctest's skip code.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <iostream>

#include "skip.hpp"

namespace portico::test {

namespace {
int skipped = 0;
}

void mark_skipped(const std::string& reason) {
    const std::string line =
        "SKIPPED: " + Catch::getResultCapture().getCurrentTestName() + ": " + reason + "\n";
    std::cout << line << std::flush;
    std::cerr << line << std::flush;
    ++skipped;
}

int exit_code_after(int catch_result) {
    if (catch_result != 0) return catch_result == skip_exit_code ? 1 : catch_result;
    if (skipped > 0) {
        std::cerr << skipped << " test case(s) skipped (SKIPPED lines above): exit code "
                  << skip_exit_code << ", which ctest reports as skipped\n";
        return skip_exit_code;
    }
    return 0;
}

}  // namespace portico::test

int main(int argc, char* argv[]) {
    return portico::test::exit_code_after(Catch::Session().run(argc, argv));
}
