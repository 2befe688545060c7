#include "tc/CodeGen/Artifact.h"
#include "tc/CodeGen/LibraryTuning.h"
#include "tc/Support/Error.h"
#include "tc/Support/Hash64.h"
#include <algorithm>
#include <cstring>
#include <iomanip>
#include <sstream>

namespace tc {

namespace {

constexpr size_t kNameBytes = 24, kEntryBytes = kNameBytes + 24, kPrologue = 16;
constexpr size_t kAlign = 64;
// A model's kernels are split into ~16 KB NVRTC programs, a section each per
// arch (a CNN's train step: 60-130 for one arch), so the bound is wide; the
// table must fit in the file besides, which bounds a hostile count anyway.
constexpr uint32_t kMaxSections = 16384;

void put32(std::string &s, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    s.push_back(char((v >> (8 * i)) & 0xff));
}
void put64(std::string &s, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    s.push_back(char((v >> (8 * i)) & 0xff));
}
uint64_t get(const char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= uint64_t(uint8_t(p[i])) << (8 * i);
  return v;
}
size_t alignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// The header's keys and the fields they fill, in the order written.
struct HeaderKey {
  const char *key;
  std::string Artifact::*field = nullptr;
  std::string BuildInfo::*built = nullptr;
};
const HeaderKey kHeaderKeys[] = {
    {"tc", nullptr, &BuildInfo::tc},
    {"llvm", nullptr, &BuildInfo::llvm},
    {"cuda-toolkit", nullptr, &BuildInfo::cudaToolkit},
    {"nvrtc", nullptr, &BuildInfo::nvrtc},
    {"cudnn-headers", nullptr, &BuildInfo::cudnn},
    {"cublaslt-headers", nullptr, &BuildInfo::cublasLt},
    {"target", &Artifact::target},
    {"cpu", &Artifact::cpu},
};

template <typename A> auto &fieldOf(A &a, const HeaderKey &k) {
  return k.field ? a.*k.field : a.built.*k.built;
}

std::string join(const std::vector<std::string> &v) {
  std::string s;
  for (const std::string &x : v)
    s += (s.empty() ? "" : ",") + x;
  return s;
}

// "key=value" lines; empty values are left out.
std::string headerText(const Artifact &a) {
  std::string text;
  auto line = [&](const char *k, const std::string &v) {
    if (!v.empty())
      text += std::string(k) + "=" + v + "\n";
  };
  for (const HeaderKey &k : kHeaderKeys)
    line(k.key, fieldOf(a, k));
  line("features", join(a.cpuFeatures));
  line("arch", join(a.arches));
  return text;
}

// Unknown keys are skipped: a later tc of this format version may add some.
void parseHeader(Artifact &a, std::string_view text, const std::string &file) {
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos)
      fail(file, ": malformed artifact header line '", line.substr(0, 40), "'");
    std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    for (const HeaderKey &h : kHeaderKeys)
      if (k == h.key)
        fieldOf(a, h) = v;
    if (k == "features" || k == "arch") {
      std::istringstream fs(v);
      for (std::string f; std::getline(fs, f, ',');)
        if (!f.empty())
          (k == "arch" ? a.arches : a.cpuFeatures).push_back(f);
    }
  }
  if (a.target.empty())
    fail(file, ": the artifact header names no target");
}

std::string hex(uint64_t v) {
  std::ostringstream o;
  o << std::hex << std::setw(16) << std::setfill('0') << v;
  return o.str();
}

// Every byte of the file is under a checksum or zero: the bytes between the
// table and the sections (alignment) are zero, and the file ends with its
// last section.
void requireZeroPadding(std::string_view s, size_t at, std::vector<std::pair<size_t, size_t>> spans,
                        const std::string &file) {
  std::sort(spans.begin(), spans.end());
  size_t last = at;
  for (const auto &[begin, end] : spans)
    last = std::max(last, end);
  if (last < s.size())
    fail(file, ": the artifact is damaged (", s.size() - last, " bytes past its last section)");
  for (const auto &[begin, end] : spans) {
    for (; at < begin; ++at)
      if (s[at] != 0)
        fail(file, ": the artifact is damaged (byte ", at, " outside every section is not 0)");
    at = std::max(at, end);
  }
}

} // namespace

const MemoryBuffer *Artifact::section(std::string_view name) const {
  auto it = sections.find(name);
  return it == sections.end() ? nullptr : it->second.get();
}

const MemoryBuffer &Artifact::require(std::string_view name) const {
  if (const MemoryBuffer *b = section(name))
    return *b;
  fail(file, ": the artifact has no '", name, "' section");
}

std::vector<const MemoryBuffer *> Artifact::cubins(const std::string &arch) const {
  std::vector<const MemoryBuffer *> parts{&require(cubinSection(arch))};
  while (const MemoryBuffer *b = section(cubinSection(arch, parts.size())))
    parts.push_back(b);
  return parts;
}

std::shared_ptr<const MemoryBuffer> Artifact::share(std::string_view name) const {
  require(name);
  return sections.find(name)->second;
}

void Artifact::setSection(const std::string &name, std::string_view bytes) {
  sections[name] = MemoryBuffer::copy(bytes, file + ":" + name);
}

void Artifact::setSection(const std::string &name, std::shared_ptr<const MemoryBuffer> bytes) {
  sections[name] = std::move(bytes);
}

bool isArtifact(std::string_view bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), kArtifactMagic, 4) == 0;
}

size_t writeArtifact(const Artifact &a, const ByteSink &sink) {
  std::vector<std::pair<std::string, std::string_view>> parts;
  std::string header = headerText(a);
  parts.emplace_back(kSectionHeader, header);
  for (const auto &[name, buf] : a.sections)
    if (name != kSectionHeader)
      parts.emplace_back(name, buf->str());
  // The reader's bound, so no artifact is written that cannot be loaded.
  if (parts.size() > kMaxSections)
    fail("artifact with ", parts.size(), " sections; at most ", kMaxSections,
         " (a larger TC_CUDA_PROGRAM_KB makes fewer programs)");
  for (const auto &[name, bytes] : parts)
    if (name.empty() || name.size() >= kNameBytes)
      fail("artifact section name '", name, "' must have 1 to ", kNameBytes - 1, " characters");
  std::string out(kArtifactMagic, 4);
  put32(out, kArtifactVersion);
  put32(out, uint32_t(parts.size()));
  put32(out, 0);
  size_t offset = alignUp(kPrologue + parts.size() * kEntryBytes + 8);
  for (const auto &[name, bytes] : parts) {
    std::string n = name;
    n.resize(kNameBytes, '\0');
    out += n;
    put64(out, offset);
    put64(out, bytes.size());
    put64(out, hash64(bytes));
    offset = alignUp(offset + bytes.size());
  }
  put64(out, hash64(out));
  // The table, then each section at its aligned offset (streamed: a train
  // step's module section holds its weights).
  size_t at = out.size();
  sink(out);
  static const char zeros[kAlign] = {};
  for (const auto &[name, bytes] : parts) {
    if (alignUp(at) > at)
      sink({zeros, alignUp(at) - at});
    at = alignUp(at);
    sink(bytes);
    at += bytes.size();
  }
  return at;
}

std::string writeArtifact(const Artifact &a) {
  std::string out;
  writeArtifact(a, [&](std::string_view b) { out += b; });
  return out;
}

Artifact readArtifact(std::shared_ptr<const MemoryBuffer> buf, ArtifactCheck check) {
  Artifact a;
  a.file = buf->name();
  std::string_view s = buf->str();
  if (!isArtifact(s))
    fail(a.file, ": not a tc artifact (no TCXA magic)");
  if (s.size() < kPrologue)
    fail(a.file, ": truncated artifact (", s.size(), " bytes)");
  uint32_t version = uint32_t(get(s.data() + 4, 4)), count = uint32_t(get(s.data() + 8, 4));
  if (version != kArtifactVersion)
    fail(a.file, ": artifact format version ", version, "; this tc reads version ",
         kArtifactVersion, " (recompile the model with this tc-codegen)");
  if (count == 0 || count > kMaxSections)
    fail(a.file, ": corrupt artifact (", count, " sections)");
  size_t tableEnd = kPrologue + size_t(count) * kEntryBytes;
  if (s.size() < tableEnd + 8)
    fail(a.file, ": truncated artifact (section table cut off)");
  // The table first: its offsets and sizes decide what is read next.
  uint64_t tableSum = get(s.data() + tableEnd, 8), tableHash = hash64(s.substr(0, tableEnd));
  if (check != ArtifactCheck::None && tableHash != tableSum)
    fail(a.file, ": the section table is damaged (checksum ", hex(tableHash), ", recorded ",
         hex(tableSum), ")");
  std::vector<std::pair<size_t, size_t>> spans; // [begin, end) of each section
  for (uint32_t i = 0; i < count; ++i) {
    const char *e = s.data() + kPrologue + size_t(i) * kEntryBytes;
    size_t len = strnlen(e, kNameBytes);
    if (len == 0 || len == kNameBytes)
      fail(a.file, ": corrupt artifact (section ", i, " has no valid name)");
    std::string name(e, len);
    uint64_t off = get(e + kNameBytes, 8), size = get(e + kNameBytes + 8, 8);
    uint64_t sum = get(e + kNameBytes + 16, 8);
    if (off > s.size() || size > s.size() - off)
      fail(a.file, ": truncated artifact (section '", name, "' at ", off, " with ", size,
           " bytes; the file has ", s.size(), ")");
    if (a.sections.count(name))
      fail(a.file, ": corrupt artifact (section '", name, "' appears twice)");
    if (check == ArtifactCheck::All) {
      uint64_t h = hash64(s.substr(size_t(off), size_t(size)));
      if (h != sum)
        fail(a.file, ": section '", name, "' is damaged (checksum ", hex(h), ", recorded ",
             hex(sum), ")");
    }
    a.sections[name] = MemoryBuffer::slice(buf, size_t(off), size_t(size), a.file + ":" + name);
    a.checksums[name] = sum;
    spans.emplace_back(size_t(off), size_t(off + size));
  }
  if (check == ArtifactCheck::All)
    requireZeroPadding(s, tableEnd + 8, std::move(spans), a.file);
  parseHeader(a, a.require(kSectionHeader).str(), a.file);
  return a;
}

std::string artifactInfo(const Artifact &a) {
  std::ostringstream o;
  o << a.file << ": tc artifact, format version " << kArtifactVersion << "\n";
  o << "target: " << a.target << "\n";
  if (!a.cpu.empty())
    o << "cpu: " << a.cpu << "\n";
  if (!a.cpuFeatures.empty())
    o << "cpu features: " << join(a.cpuFeatures) << "\n";
  if (!a.arches.empty())
    o << "arches: " << join(a.arches) << "\n";
  for (const HeaderKey &k : kHeaderKeys)
    if (k.built && !fieldOf(a, k).empty())
      o << "built with " << k.key << ": " << fieldOf(a, k) << "\n";
  for (const auto &[name, buf] : a.sections) {
    auto sum = a.checksums.find(name);
    o << "section " << name << ": " << buf->size() << " bytes, checksum "
      << (sum == a.checksums.end() ? std::string("-") : hex(sum->second)) << "\n";
  }
  if (const MemoryBuffer *t = a.section(kSectionTuning)) {
    LibraryTuning tuning = readTuningSection(t->str(), a.file);
    o << "library calls: allow-tf32 " << tf32Name(tuning.tf32)
      << "; fp32 calls may round through TF32: " << (mayRoundThroughTf32(a) ? "yes" : "no") << "; "
      << tuning.calls.size() << " tuned"
      << (tuning.env.empty() ? std::string() : " on " + tuning.env) << "\n";
  }
  return o.str();
}

} // namespace tc
