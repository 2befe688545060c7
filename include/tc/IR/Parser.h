// Reads the .tcir text form. Errors are tc::Error "file:line:col: what".
#pragma once
#include "tc/IR/IR.h"
#include <memory>
#include <string_view>

namespace tc {

class Lexer;

// Parses a module and verifies every op as it is read.
std::unique_ptr<Module> parseModule(std::string_view text, const std::string &file);
// Reads `count` elements of type `t` written by formatElements.
std::vector<uint8_t> parseElements(Lexer &lex, DType t, size_t count);

} // namespace tc
