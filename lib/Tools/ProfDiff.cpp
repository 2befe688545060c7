#include "ProfCommands.h"
#include "tc/Profile/ProfileDiff.h"
#include "tc/Support/Error.h"
#include "tc/Support/MemoryBuffer.h"
#include "tc/Tools/ToolCommon.h"
#include <iostream>

namespace tc::tools {

int profDiffMain(int argc, char **argv) {
  return runTool("tc-prof", [&] {
    std::vector<std::string> files;
    std::string format = "text";
    double minPercent = 5;
    po::options_description opts("tc-prof diff options");
    opts.add_options()("help,h", "print this help and exit")(
        "format", po::value(&format)->value_name("text|json|csv"), "output format")(
        "min-change", po::value(&minPercent)->value_name("PERCENT"),
        "smallest change flagged, in percent of A's time (5); it must also exceed twice the "
        "larger standard deviation")("files", po::value(&files)->composing(), "A and B");
    po::positional_options_description pos;
    pos.add("files", -1);
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << "usage: tc-prof diff [options] A B\n  A, B: traces written by tc-prof "
                   "--trace, or reports written by tc-prof --summary --format=json\n\n"
                << opts;
      return 0;
    }
    if (files.size() != 2)
      fail("diff takes two files (traces or --format=json reports), got ", files.size());
    if (format != "text" && format != "json" && format != "csv")
      fail("unknown --format '", format, "' (text, json or csv)");
    ProfileReport a =
        ProfileReport::fromJson(std::string(MemoryBuffer::open(files[0])->str()), files[0]);
    ProfileReport b =
        ProfileReport::fromJson(std::string(MemoryBuffer::open(files[1])->str()), files[1]);
    std::cout << diffReports(a, b, format, minPercent);
    return 0;
  });
}

} // namespace tc::tools
