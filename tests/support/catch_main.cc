// The only translation unit that compiles Catch2's implementation.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
