#include "tc/Tools/Drivers.h"

int main(int argc, char **argv) { return tc::tools::tcCodegenMain(argc, argv); }
