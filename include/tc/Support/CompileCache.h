// Compiled kernels by content. A cubin or an object file is a function of
// the compiler (its version, target and options) and the source, so a second
// compile of the same kernels (the same model again, a retry with another
// flag that leaves the kernels alone, the test suites of two builds) reads
// the result back instead of running NVRTC or clang again.
//
// Entries are files named by a hash of compiler and source, each holding a
// second hash of both and a hash of its bytes: a damaged, truncated or
// foreign entry is a miss and is written again. Writes are atomic (two
// compiles of the same kernels race harmlessly), and past the size limit
// the least recently used entries go.
//
// Where: $TC_CACHE_DIR, else $XDG_CACHE_HOME/tc/kernels, else
// $HOME/.cache/tc/kernels; TC_CACHE_DIR=off compiles every time. Size limit:
// $TC_CACHE_MAX_MB (default 2048).
#pragma once
#include <functional>
#include <string>
#include <string_view>

namespace tc {

enum class CacheUse {
  Hit,        // read back
  Stored,     // compiled, then written
  Off,        // TC_CACHE_DIR=off (or no home to put it in): compiled
  Unwritable, // the folder could not be made or written: compiled
};

// `compile()`'s result for (`compiler`, `source`): the cached bytes when an
// intact entry is there, else compile() stored. A cache that cannot be used
// never fails the compile; `use` says what happened.
std::string cachedCompile(std::string_view compiler, std::string_view source,
                          const std::function<std::string()> &compile, CacheUse *use = nullptr);

// The folder entries go to ("" when the cache is off).
std::string compileCacheDir();

// " (cached)" for a hit, "" otherwise: what a compile stage's name adds.
const char *cacheNote(CacheUse use);

} // namespace tc
