// SPDX-License-Identifier: MIT
// What the pickle machine's files share, internal to core: step() in pickle_machine.cpp hands the
// operands of protocol 0's text opcodes to pickle_operands.cpp's decoders; both end messages alike.
//
// The decoders follow CPython 3.11's C unpickler (Modules/_pickle.c) to the byte: a text operand
// CPython reads is read here to the same value, and one it refuses is refused (docs/formats.md,
// "Parity with CPython's unpickler").
#pragma once

#include "ckpt/pickle/pickle_machine.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ckpt::detail {

/// " at offset N": the end of every message about an opcode.
inline std::string at(std::size_t offset) { return " at offset " + std::to_string(offset); }

/// STRING's operand (a quoted Python 2 repr with backslash escapes, as PyBytes_DecodeEscape reads
/// it), decoded. Throws FormatError.
std::string decodeStringRepr(std::string_view s, std::size_t offset);

/// UNICODE's operand (raw-unicode-escape), as UTF-8 (a lone surrogate as its three-byte form,
/// which is what BINUNICODE's "surrogatepass" UTF-8 holds). Throws FormatError.
std::string decodeRawUnicodeEscape(std::string_view s, std::size_t offset);

/// Whether `s` is UTF-8 as CPython decodes it: strictly, or with "surrogatepass" (BINUNICODE).
bool isUtf8(std::string_view s, bool surrogatePass);

/// A Python int read from text: `value` when it fits int64, else `decimal` (digits, optional '-').
struct TextInt {
    bool isBool = false; // INT's "01" / "00" (and any two-character operand strtol reads as 0 or 1)
    bool fits = true;
    int64_t value = 0;
    std::string decimal;
};

/// INT's operand: C strtol(s, &end, 0) first, CPython's PyLong_FromString(s, NULL, 0) when that
/// overflows or stops short. Throws FormatError where CPython raises; LimitError past the limit.
TextInt parseIntOperand(std::string_view line, std::size_t offset, std::size_t maxLongBytes);

/// LONG's operand: an optional trailing 'L' dropped, then PyLong_FromString(s, NULL, 0).
TextInt parseLongOperand(std::string_view line, std::size_t offset, std::size_t maxLongBytes);

/// FLOAT's operand: PyOS_string_to_double (no surrounding whitespace, "inf" and "nan" in any case,
/// overflow refused, underflow to zero).
double parseFloatOperand(std::string_view line, std::size_t offset);

/// The memo index of GET and PUT: PyLong_FromString(s, NULL, 10) (sign, surrounding whitespace,
/// underscores between digits). Negative values are returned; callers refuse them as CPython does.
int64_t parseMemoIndex(std::string_view s, std::size_t offset);


// CPython's checks on writes into values and on object construction (pickle_value_rules.cpp).
/// A value whose Python type its opcode fixes (int, str, tuple, list, dict...), not an opaque object.
bool isInert(Kind kind);
bool isUnhashable(const ValueGraph& graph, NodeId id);
/// Throws FormatError when `id` could not be a dict key or set item.
void requireHashable(const ValueGraph& graph, NodeId id, const char* what, std::size_t offset);
/// An int 0-255 written into a bytearray. Throws FormatError otherwise.
char byteValue(const ValueGraph& graph, NodeId id, std::size_t offset);
/// A list index (negative from the end, bools as ints). Throws FormatError when out of range.
std::size_t itemIndex(const ValueGraph& graph, NodeId key, std::size_t size, std::size_t offset);
/// BUILD: kept on opaque objects (every state when several), checked on inert values.
void build(ValueGraph& graph, NodeId target, NodeId state, std::size_t offset);
void showThroughViews(ValueGraph& graph, NodeId byteArray);
/// The type checks CPython makes before NEWOBJ / NEWOBJ_EX call anything.
void checkNewObj(const ValueGraph& graph, NodeId cls, NodeId args, NodeId kwargs, std::size_t offset);

} // namespace ckpt::detail
