// tc-prof's subcommands (TcProfMain.cpp dispatches on the first argument).
#pragma once

namespace tc::tools {
int profRunMain(int argc, char **argv);     // tc-prof m.tcx --summary / --trace
int profCompileMain(int argc, char **argv); // tc-prof compile m.tcx
int profDiffMain(int argc, char **argv);    // tc-prof diff A B
} // namespace tc::tools
