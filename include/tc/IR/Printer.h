// The .tcir text form. Printing is canonical: parse(print(M)) prints back
// byte-identically, and so does a trip through .tcbc.
#pragma once
#include "tc/IR/IR.h"
#include <ostream>

namespace tc {

// Constants with at most this many elements are printed inline; larger ones
// go to the trailing blob section.
constexpr size_t kInlineElementLimit = 16;

void printModule(const Module &m, std::ostream &os);
std::string printModuleToString(const Module &m);
// One op on one line, as it appears inside a function (for diagnostics/dumps).
std::string printOp(const Op &op);

// Inline element list of a constant, e.g. `[1.0, 2.5]`, or nullopt when some
// element would not read back to the same bytes (and for str, whose element
// count the packed bytes do not carry).
std::optional<std::string> formatElements(DType t, std::span<const uint8_t> bytes);

} // namespace tc
