#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tc {
std::string base64Encode(std::span<const uint8_t> bytes);
// nullopt on any character outside the alphabet or bad padding.
std::optional<std::vector<uint8_t>> base64Decode(std::string_view text);
} // namespace tc
