#include "tc/Tools/Drivers.h"

int main(int argc, char **argv) { return tc::tools::tcOptMain(argc, argv); }
