#include "tc/CodeGen/LibraryTuning.h"
#include "tc/CodeGen/Artifact.h"
#include "tc/CodeGen/KernelTable.h"
#include "tc/Support/Error.h"
#include "tc/Support/TabFields.h"
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tc {

std::optional<Tf32> parseTf32(std::string_view s) {
  for (size_t i = 0; i < std::size(kTf32Names); ++i)
    if (s == kTf32Names[i])
      return Tf32(i);
  return std::nullopt;
}

const char *tf32Name(Tf32 t) { return kTf32Names[size_t(t)]; }

std::string TuningEnv::key() const {
  return gpu + "|sm_" + std::to_string(cc) + "|cudnn " + std::to_string(cudnn) + "|cublaslt " +
         std::to_string(cublasLt) + "|driver " + std::to_string(driver);
}

bool mayRoundThroughTf32(const Artifact &a) {
  const MemoryBuffer *section = a.section(kSectionTuning), *table = a.section(kSectionKernels);
  if (!section || !table)
    return false;
  Tf32 tf32 = readTuningSection(section->str(), a.file).tf32;
  for (const KernelTableLine &line : splitKernelTable(table->str())) {
    const std::string &library = line.fields.back();
    if ((tf32 != Tf32::None && library == "cudnn") || (tf32 == Tf32::All && library == "cublaslt"))
      return true;
  }
  return false;
}

namespace {

std::vector<std::string> splitTabs(const std::string &line) {
  std::vector<std::string> parts;
  for (std::string_view f : tabFields(line))
    parts.emplace_back(f);
  return parts;
}

// A time in microseconds: a finite number >= 0, else nullopt.
std::optional<double> parseUs(const std::string &s) {
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || !std::isfinite(v) || v < 0)
    return std::nullopt;
  return v;
}

// Keys and choices are one line of text without tabs: a key with one could
// not be read back.
bool oneField(const std::string &s) {
  return !s.empty() && s.find_first_of("\t\n") == std::string::npos;
}

} // namespace

std::string writeTuningSection(const LibraryTuning &t) {
  std::ostringstream s;
  s << "allow-tf32 " << tf32Name(t.tf32) << "\n";
  if (!t.env.empty())
    s << "env " << t.env << "\n";
  for (const auto &[key, call] : t.calls)
    s << "call " << key << "\t" << call.choice << "\t" << call.us << "\n";
  return s.str();
}

LibraryTuning readTuningSection(std::string_view text, const std::string &file) {
  LibraryTuning t;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    auto bad = [&](const char *what) {
      fail(file, ": section '", kSectionTuning, "' line ", n, ": ", what);
    };
    if (line.rfind("allow-tf32 ", 0) == 0) {
      std::optional<Tf32> v = parseTf32(line.substr(11));
      if (!v)
        bad("allow-tf32 is none, conv or all");
      t.tf32 = *v;
    } else if (line.rfind("env ", 0) == 0) {
      t.env = line.substr(4);
    } else if (line.rfind("call ", 0) == 0) {
      std::vector<std::string> f = splitTabs(line.substr(5));
      std::optional<double> us = f.size() == 3 ? parseUs(f[2]) : std::nullopt;
      if (!us || f[0].empty() || f[1].empty())
        bad("expected 'call <key>\\t<choice>\\t<us>'");
      t.calls[f[0]] = {f[1], *us};
    } else if (!line.empty()) {
      bad("expected allow-tf32, env or call");
    }
  }
  return t;
}

const TunedCall *TuningCache::find(const std::string &env, const std::string &call) const {
  for (const Entry &e : entries)
    if (e.env == env && e.call == call)
      return &e.tuned;
  return nullptr;
}

void TuningCache::put(const std::string &env, const std::string &call, const TunedCall &t) {
  for (Entry &e : entries)
    if (e.env == env && e.call == call) {
      e.tuned = t;
      return;
    }
  entries.push_back({env, call, t});
}

void TuningCache::erase(const std::string &env, const std::string &call) {
  std::erase_if(entries, [&](const Entry &e) { return e.env == env && e.call == call; });
}

size_t TuningCache::othersThan(const std::string &env) const {
  size_t n = 0;
  for (const Entry &e : entries)
    n += e.env != env;
  return n;
}

static constexpr const char *kCacheHeader = "tc-tuning-cache 1";

TuningCache readTuningCache(const std::string &path) {
  TuningCache c;
  std::ifstream in(path);
  if (!in)
    return c; // written after tuning
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    auto bad = [&](const std::string &what) { fail("tuning cache ", path, ":", n, ": ", what); };
    if (n == 1) {
      if (line != kCacheHeader)
        bad(std::string("expected '") + kCacheHeader + "' (not a tc tuning cache)");
      continue;
    }
    if (line.empty() || line[0] == '#')
      continue;
    std::vector<std::string> f = splitTabs(line);
    if (f.size() != 4)
      bad("expected 4 tab-separated fields (env, call, choice, us), got " +
          std::to_string(f.size()));
    std::optional<double> us = parseUs(f[3]);
    if (!oneField(f[0]) || !oneField(f[1]) || !oneField(f[2]) || !us)
      bad("an empty field or a time that is not a number >= 0");
    c.put(f[0], f[1], {f[2], *us});
  }
  return c;
}

std::string writeTuningCache(const TuningCache &c) {
  std::ostringstream s;
  s << kCacheHeader << "\n# env\tcall\tchoice\tus (tc-codegen --tune; docs/cuda-backend.md)\n";
  for (const TuningCache::Entry &e : c.entries)
    if (oneField(e.env) && oneField(e.call) && oneField(e.tuned.choice))
      s << e.env << "\t" << e.call << "\t" << e.tuned.choice << "\t" << e.tuned.us << "\n";
  return s.str();
}

std::optional<size_t> pickFastest(size_t count, const std::function<double(size_t)> &timeMs,
                                  std::vector<double> *times) {
  std::optional<size_t> best;
  double bestMs = 0;
  for (size_t i = 0; i < count; ++i) {
    double ms = timeMs(i);
    if (times)
      times->push_back(ms);
    if (ms >= 0 && (!best || ms < bestMs)) {
      best = i;
      bestMs = ms;
    }
  }
  return best;
}

std::string TuningSummary::statsLine() const {
  if (!kept.empty())
    return "tuning: " + kept + "; heuristic algorithm choice kept";
  std::ostringstream s;
  s << "tuning: " << shapes << " shapes, " << hits << " cache hits, " << timingMs << " ms timing";
  if (kernels)
    s << "; " << kernels << " kernels with variants, " << kernelHits << " cache hits";
  return s.str();
}

} // namespace tc
