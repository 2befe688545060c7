#include "tc/CodeGen/Artifact.h"
#include "tc/Support/Error.h"
#include <cstring>
#include <sstream>

namespace tc {

namespace {

constexpr size_t kNameBytes = 24, kEntryBytes = kNameBytes + 16, kPrologue = 16;
constexpr size_t kAlign = 64;
constexpr uint32_t kMaxSections = 64;

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

std::string headerText(const Artifact &a) {
  std::string features;
  for (const std::string &f : a.cpuFeatures)
    features += (features.empty() ? "" : ",") + f;
  std::string arches;
  for (const std::string &s : a.arches)
    arches += (arches.empty() ? "" : ",") + s;
  return "toolchain=" + a.toolchain + "\ntarget=" + a.target + "\ncpu=" + a.cpu +
         "\nfeatures=" + features + "\n" + (arches.empty() ? "" : "arch=" + arches + "\n");
}

void parseHeader(Artifact &a, std::string_view text, const std::string &file) {
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos)
      fail(file, ": malformed artifact header line '", line.substr(0, 40), "'");
    std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    if (k == "toolchain")
      a.toolchain = v;
    else if (k == "target")
      a.target = v;
    else if (k == "cpu")
      a.cpu = v;
    else if (k == "features" || k == "arch") {
      std::istringstream fs(v);
      for (std::string f; std::getline(fs, f, ',');)
        if (!f.empty())
          (k == "arch" ? a.arches : a.cpuFeatures).push_back(f);
    }
  }
  if (a.target.empty())
    fail(file, ": the artifact header names no target");
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

std::shared_ptr<const MemoryBuffer> Artifact::share(std::string_view name) const {
  require(name);
  return sections.find(name)->second;
}

void Artifact::setSection(const std::string &name, std::string_view bytes) {
  sections[name] = MemoryBuffer::copy(bytes, file + ":" + name);
}

bool isArtifact(std::string_view bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), kArtifactMagic, 4) == 0;
}

std::string writeArtifact(const Artifact &a) {
  std::vector<std::pair<std::string, std::string_view>> parts;
  std::string header = headerText(a);
  parts.emplace_back(kSectionHeader, header);
  for (const auto &[name, buf] : a.sections)
    if (name != kSectionHeader)
      parts.emplace_back(name, buf->str());
  for (const auto &[name, bytes] : parts)
    if (name.empty() || name.size() >= kNameBytes)
      fail("artifact section name '", name, "' must have 1 to ", kNameBytes - 1, " characters");
  std::string out(kArtifactMagic, 4);
  put32(out, kArtifactVersion);
  put32(out, uint32_t(parts.size()));
  put32(out, 0);
  size_t offset = alignUp(kPrologue + parts.size() * kEntryBytes);
  for (const auto &[name, bytes] : parts) {
    std::string n = name;
    n.resize(kNameBytes, '\0');
    out += n;
    put64(out, offset);
    put64(out, bytes.size());
    offset = alignUp(offset + bytes.size());
  }
  for (const auto &[name, bytes] : parts) {
    out.resize(alignUp(out.size()), '\0');
    out.append(bytes.data(), bytes.size());
  }
  return out;
}

Artifact readArtifact(std::shared_ptr<const MemoryBuffer> buf) {
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
  if (s.size() < kPrologue + size_t(count) * kEntryBytes)
    fail(a.file, ": truncated artifact (section table cut off)");
  for (uint32_t i = 0; i < count; ++i) {
    const char *e = s.data() + kPrologue + size_t(i) * kEntryBytes;
    size_t len = strnlen(e, kNameBytes);
    if (len == 0 || len == kNameBytes)
      fail(a.file, ": corrupt artifact (section ", i, " has no valid name)");
    std::string name(e, len);
    uint64_t off = get(e + kNameBytes, 8), size = get(e + kNameBytes + 8, 8);
    if (off > s.size() || size > s.size() - off)
      fail(a.file, ": truncated artifact (section '", name, "' at ", off, " with ", size,
           " bytes; the file has ", s.size(), ")");
    if (a.sections.count(name))
      fail(a.file, ": corrupt artifact (section '", name, "' appears twice)");
    a.sections[name] = MemoryBuffer::slice(buf, size_t(off), size_t(size), a.file + ":" + name);
  }
  parseHeader(a, a.require(kSectionHeader).str(), a.file);
  return a;
}

} // namespace tc
