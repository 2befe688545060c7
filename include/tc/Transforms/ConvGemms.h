// conv-gemms (lib/Transforms/ConvGemms.cpp): which 1x1 convolutions run as
// cuBLASLt GEMMs. The mode is the pass's `mode` option, spelled by tc-opt's
// --conv-gemm; parsed here so that tc-opt refuses a bad spelling before any
// pass runs and the pass reads the same names.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace tc {

enum class ConvGemmMode : uint8_t {
  Auto,   // the rule in ConvGemms.cpp (gemmByDefault)
  Always, // every eligible 1x1 conv
  Never   // none
};

std::optional<ConvGemmMode> parseConvGemmMode(std::string_view s);

} // namespace tc
