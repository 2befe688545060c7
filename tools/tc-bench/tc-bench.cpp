#include "tc/Tools/Drivers.h"

int main(int argc, char **argv) { return tc::tools::tcBenchMain(argc, argv); }
