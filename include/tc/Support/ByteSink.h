// Where a writer hands its output, piece by piece and in order (a file, a
// string, a buffer), so large outputs are not assembled in memory first.
#pragma once
#include <functional>
#include <string_view>

namespace tc {

using ByteSink = std::function<void(std::string_view)>;

} // namespace tc
