#include "tc/Support/CompileCache.h"
#include "tc/Support/AtomicFile.h"
#include "tc/Support/EnvNumber.h"
#include "tc/Support/Error.h"
#include "tc/Support/Hash64.h"
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

namespace tc {

namespace fs = std::filesystem;

namespace {

// An entry: magic, the second key hash, the payload's size and hash, the
// payload. Little-endian words, as artifacts store them.
constexpr char kMagic[8] = {'T', 'C', 'K', 'C', 'A', 'C', 'H', '1'};
constexpr size_t kHeader = 8 + 3 * 8;
constexpr uint64_t kSecondSeed = 0x7c5eed0fcac4e001ull;

std::string keyBytes(std::string_view compiler, std::string_view source) {
  std::string k;
  k.reserve(compiler.size() + 1 + source.size());
  k.append(compiler).push_back('\0');
  k.append(source);
  return k;
}

void put64(std::string &out, uint64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);
  out.append(b, 8);
}

uint64_t get64(const std::string &in, size_t at) {
  uint64_t v;
  std::memcpy(&v, in.data() + at, 8);
  return v;
}

// The payload of an intact entry for `check`, else nothing.
bool readEntry(const fs::path &path, uint64_t check, std::string &payload) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f)
    return false;
  std::streamoff n = f.tellg();
  if (n < std::streamoff(kHeader))
    return false;
  std::string bytes(size_t(n), '\0');
  f.seekg(0);
  if (!f.read(bytes.data(), n))
    return false;
  if (std::memcmp(bytes.data(), kMagic, 8) != 0 || get64(bytes, 8) != check ||
      get64(bytes, 16) != bytes.size() - kHeader)
    return false;
  std::string_view body(bytes.data() + kHeader, bytes.size() - kHeader);
  if (hash64(body) != get64(bytes, 24))
    return false;
  payload.assign(body);
  return true;
}

uint64_t maxBytes() { return envNumber("TC_CACHE_MAX_MB").value_or(2048) << 20; }

// Past the limit, the entries least recently used (a hit touches its
// file) go until the folder is at 3/4 of it; a writer's temporary file left
// by a killed compile goes once it is an hour old.
void trim(const fs::path &dir) {
  struct Entry {
    fs::path path;
    fs::file_time_type when;
    uint64_t size;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (const fs::directory_entry &e : fs::directory_iterator(dir, ec)) {
    std::error_code ignore;
    if (!e.is_regular_file(ignore))
      continue;
    fs::file_time_type when = e.last_write_time(ignore);
    std::string name = e.path().filename().string();
    if (name.find(".tmp.") != std::string::npos) {
      if (now - when > std::chrono::hours(1))
        fs::remove(e.path(), ignore);
      continue;
    }
    if (e.path().extension() != ".bin")
      continue;
    uint64_t size = e.file_size(ignore);
    entries.push_back({e.path(), when, size});
    total += size;
  }
  uint64_t limit = maxBytes();
  if (total <= limit)
    return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry &a, const Entry &b) { return a.when < b.when; });
  for (const Entry &e : entries) {
    if (total <= limit / 4 * 3)
      break;
    std::error_code ignore;
    if (fs::remove(e.path, ignore))
      total -= e.size;
  }
}

} // namespace

std::string compileCacheDir() {
  if (const char *d = std::getenv("TC_CACHE_DIR"))
    return std::string(d) == "off" ? "" : std::string(d);
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return (fs::path(x) / "tc" / "kernels").string();
  if (const char *h = std::getenv("HOME"); h && *h)
    return (fs::path(h) / ".cache" / "tc" / "kernels").string();
  return "";
}

const char *cacheNote(CacheUse use) { return use == CacheUse::Hit ? " (cached)" : ""; }

std::string cachedCompile(std::string_view compiler, std::string_view source,
                          const std::function<std::string()> &compile, CacheUse *use) {
  CacheUse scratch;
  CacheUse &u = use ? *use : scratch;
  std::string dir = compileCacheDir();
  if (dir.empty()) {
    u = CacheUse::Off;
    return compile();
  }
  std::string key = keyBytes(compiler, source);
  uint64_t name = hash64(key), check = hash64(key, kSecondSeed);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(name));
  fs::path path = fs::path(dir) / (std::string(hex) + ".bin");
  std::string payload;
  if (readEntry(path, check, payload)) {
    std::error_code ignore;
    fs::last_write_time(path, fs::file_time_type::clock::now(), ignore);
    u = CacheUse::Hit;
    return payload;
  }
  payload = compile();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    u = CacheUse::Unwritable;
    return payload;
  }
  std::string entry(kMagic, 8);
  put64(entry, check);
  put64(entry, payload.size());
  put64(entry, hash64(payload));
  entry += payload;
  try {
    AtomicFile f(path.string(), /*sync=*/false);
    f.write(entry.data(), entry.size());
    f.commit();
    u = CacheUse::Stored;
  } catch (const Error &) {
    u = CacheUse::Unwritable;
    return payload;
  }
  trim(dir);
  return payload;
}

} // namespace tc
