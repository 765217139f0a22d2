// Catch's main, compiled once for both test binaries: it is the costliest
// file of the suite to compile (about 50 s at -O2 -g here).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
