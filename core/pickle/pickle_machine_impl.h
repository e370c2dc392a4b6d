// SPDX-License-Identifier: MIT
// What the pickle machine's files share, internal to core: step() in pickle_machine.cpp hands the
// operands of protocol 0's text opcodes to pickle_operands.cpp's decoders; both end messages alike.
#pragma once

#include "ckpt/pickle/pickle_machine.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ckpt::detail {

/// " at offset N": the end of every message about an opcode.
inline std::string at(std::size_t offset) { return " at offset " + std::to_string(offset); }

/// STRING's operand (a quoted Python 2 repr with backslash escapes), decoded. Throws FormatError.
std::string decodeStringRepr(std::string_view s, std::size_t offset);

/// UNICODE's operand (raw-unicode-escape), as UTF-8. Throws FormatError.
std::string decodeRawUnicodeEscape(std::string_view s, std::size_t offset);

/// Decimal digits with an optional sign: an INT or LONG operand too large for int64.
bool isDecimal(std::string_view s);

/// The memo index of GET and PUT (decimal text). Throws FormatError.
uint64_t parseIndex(std::string_view s, std::size_t offset);

} // namespace ckpt::detail
