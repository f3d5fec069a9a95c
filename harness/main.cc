// The chaosbench binary: everything lives in the harness library; this only hands over.
#include "harness/cli/cli.h"

int main(int argc, char** argv) { return chaosbench::harness::cli_main(argc, argv); }
