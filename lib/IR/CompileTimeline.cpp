#include "tc/IR/CompileTimeline.h"
#include <sstream>

namespace tc {

// One "tool<TAB>stage<TAB>seconds" line per entry.
void appendTimeline(Module &m, const TimelineEntry &e) {
  std::ostringstream os;
  os << e.tool << '\t' << e.stage << '\t' << e.seconds << '\n';
  m.metadata[kTimelineMetadata] += os.str();
}

std::vector<TimelineEntry> readTimeline(const Module &m) {
  std::vector<TimelineEntry> out;
  auto it = m.metadata.find(kTimelineMetadata);
  if (it == m.metadata.end())
    return out;
  std::istringstream is(it->second);
  for (std::string line; std::getline(is, line);) {
    size_t a = line.find('\t'), b = a == std::string::npos ? a : line.find('\t', a + 1);
    if (b == std::string::npos)
      continue; // not ours: ignore rather than fail a compile over timing
    TimelineEntry e{line.substr(0, a), line.substr(a + 1, b - a - 1), 0.0};
    std::istringstream(line.substr(b + 1)) >> e.seconds;
    out.push_back(std::move(e));
  }
  return out;
}

std::string timelineJson(const std::vector<TimelineEntry> &entries) {
  auto quoted = [](const std::string &s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\')
        q += '\\';
      if (static_cast<unsigned char>(c) >= 0x20)
        q += c;
    }
    return q + "\"";
  };
  std::ostringstream os;
  os << "{\"stages\": [";
  for (size_t i = 0; i < entries.size(); ++i)
    os << (i ? ", " : "") << "{\"tool\": " << quoted(entries[i].tool)
       << ", \"name\": " << quoted(entries[i].stage) << ", \"seconds\": " << entries[i].seconds
       << "}";
  os << "]}\n";
  return os.str();
}

} // namespace tc
