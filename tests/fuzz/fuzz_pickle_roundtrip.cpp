// SPDX-License-Identifier: MIT
// The pickle machine, differentially: the input is a recipe for a value (None, bools, ints of any
// size, floats, str, bytes, bytearray, tuples, lists, dicts, sets, frozensets, with shared
// references and cycles through the mutable ones). The recipe is written as a pickle with opcode
// choices the input also picks: every protocol header, text and binary numbers (INT with signs,
// spaces, underscores, hex and octal; LONG with and without its L, in hex too; FLOAT text),
// the string opcodes of every protocol, containers built empty then filled or from a MARK, PUT /
// BINPUT / LONG_BINPUT / MEMOIZE and GET / BINGET / LONG_BINGET with text indices in any spelling
// Python's int() reads, FRAMEs at opcode boundaries, and no-op noise (MARK+POP, POP_MARK, DUP+POP,
// READONLY_BUFFER on bytes). Every such pickle is valid for CPython; the machine must read it
// and build exactly the value written, or the target aborts.
#include "ckpt/pickle/pickle_machine.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

// GCC 12 warns about `"literal" + std::string` inlined into a larger function (its bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace {

using ckpt::Kind;
using ckpt::NodeId;

// Reads the recipe: each call takes the next byte(s); past the end, zeros.
class Recipe {
public:
    Recipe(const uint8_t* data, std::size_t size) : m_data(data), m_size(size) {}
    uint8_t byte() { return m_pos < m_size ? m_data[m_pos++] : 0; }
    bool flag() { return byte() & 1; }
    unsigned pick(unsigned n) { return n == 0 ? 0 : byte() % n; }
    uint64_t u64()
    {
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i)
            v = v << 8 | byte();
        return v;
    }
    bool done() const { return m_pos >= m_size; }

private:
    const uint8_t* m_data;
    std::size_t m_size;
    std::size_t m_pos = 0;
};

struct Value {
    enum Type { None, Bool, Int, Big, Float, Str, Bytes, ByteArray, Tuple, List, Dict, Set, FrozenSet } type = None;
    bool b = false;
    int64_t i = 0;
    std::string dec;     // Big: decimal digits with an optional '-', outside int64
    double f = 0;
    std::string s;       // Str: UTF-8 (no surrogates); Bytes, ByteArray: the bytes
    std::vector<int> items; // indices into the pool; Dict: key, value, key, value...
    int refs = 0;        // how many containers hold it (mutable values may be held by several)
};

bool isMutable(Value::Type t)
{
    return t == Value::List || t == Value::Dict || t == Value::Set || t == Value::ByteArray;
}

// ---------------------------------------------------------------- building the value from the recipe

class Builder {
public:
    explicit Builder(Recipe& r) : m_r(r) {}
    std::vector<Value> pool;

    int value(int depth)
    {
        if (pool.size() > 400)
            return atom();
        const unsigned k = m_r.pick(16);
        // A reference to a mutable value made before (shared), or still being filled (a cycle).
        if (k == 15 && !m_mutables.empty()) {
            const int target = m_mutables[m_r.pick(static_cast<unsigned>(m_mutables.size()))];
            ++pool[static_cast<std::size_t>(target)].refs;
            return target;
        }
        if (depth <= 0 || k < 7)
            return atom();
        switch (k) {
        case 7:
        case 8: { // list
            const int id = add(Value{.type = Value::List});
            m_mutables.push_back(id);
            const unsigned n = m_r.pick(6);
            for (unsigned j = 0; j < n; ++j) {
                const int child = value(depth - 1);
                pool[static_cast<std::size_t>(id)].items.push_back(child);
            }
            return id;
        }
        case 9: { // dict
            const int id = add(Value{.type = Value::Dict});
            m_mutables.push_back(id);
            const unsigned n = m_r.pick(5);
            for (unsigned j = 0; j < n; ++j) {
                const int key = hashable(2);
                const int v = value(depth - 1);
                pool[static_cast<std::size_t>(id)].items.push_back(key);
                pool[static_cast<std::size_t>(id)].items.push_back(v);
            }
            return id;
        }
        case 10: { // set
            const int id = add(Value{.type = Value::Set});
            m_mutables.push_back(id);
            const unsigned n = m_r.pick(5);
            for (unsigned j = 0; j < n; ++j) {
                const int item = hashable(2);
                pool[static_cast<std::size_t>(id)].items.push_back(item);
            }
            return id;
        }
        case 11: { // bytearray
            Value v{.type = Value::ByteArray};
            const unsigned n = m_r.pick(9);
            for (unsigned j = 0; j < n; ++j)
                v.s += static_cast<char>(m_r.byte());
            const int id = add(std::move(v));
            m_mutables.push_back(id);
            return id;
        }
        case 12: { // frozenset
            Value v{.type = Value::FrozenSet};
            const unsigned n = m_r.pick(4);
            for (unsigned j = 0; j < n; ++j)
                v.items.push_back(hashable(2));
            return add(std::move(v));
        }
        default: { // tuple, of anything (a tuple holding a mutable value is unhashable, never a key)
            Value v{.type = Value::Tuple};
            const unsigned n = m_r.pick(5);
            for (unsigned j = 0; j < n; ++j)
                v.items.push_back(value(depth - 1));
            return add(std::move(v));
        }
        }
    }

private:
    int add(Value v)
    {
        v.refs = 1;
        pool.push_back(std::move(v));
        return static_cast<int>(pool.size() - 1);
    }

    int hashable(int depth)
    {
        const unsigned k = m_r.pick(8);
        if (depth <= 0 || k < 6)
            return atom();
        Value v{.type = k == 6 ? Value::Tuple : Value::FrozenSet};
        const unsigned n = m_r.pick(4);
        for (unsigned j = 0; j < n; ++j)
            v.items.push_back(hashable(depth - 1));
        return add(std::move(v));
    }

    std::string text()
    {
        static const uint32_t alphabet[] = {'a', 'b', 'z', '0', ' ', '\n', '\r', '\\', '\'', '"', 0, 0x7f, 0x80,
                                            0xe9, 0xff, 0x100, 0x4e2d, 0xfffd, 0x1f600, 0x10ffff, '_', 'u', 'U', 'x'};
        std::string out;
        const unsigned n = m_r.pick(10);
        for (unsigned j = 0; j < n; ++j) {
            const uint32_t cp = alphabet[m_r.pick(sizeof alphabet / sizeof alphabet[0])];
            if (cp < 0x80) {
                out += static_cast<char>(cp);
            } else if (cp < 0x800) {
                out += static_cast<char>(0xC0 | (cp >> 6));
                out += static_cast<char>(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                out += static_cast<char>(0xE0 | (cp >> 12));
                out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
                out += static_cast<char>(0x80 | (cp & 0x3F));
            } else {
                out += static_cast<char>(0xF0 | (cp >> 18));
                out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
                out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
                out += static_cast<char>(0x80 | (cp & 0x3F));
            }
        }
        return out;
    }

    int atom()
    {
        switch (m_r.pick(10)) {
        case 0: return add(Value{.type = Value::None});
        case 1: return add(Value{.type = Value::Bool, .b = m_r.flag()});
        case 2: return add(Value{.type = Value::Int, .i = static_cast<int8_t>(m_r.byte())});
        case 3: {
            static const int64_t edges[] = {0, 1, 255, 256, 65535, 65536, 2147483647, -2147483648LL, 2147483648LL,
                                            INT64_MAX, INT64_MIN, -1, 1000000};
            return add(Value{.type = Value::Int, .i = edges[m_r.pick(sizeof edges / sizeof edges[0])]});
        }
        case 4: return add(Value{.type = Value::Int, .i = static_cast<int64_t>(m_r.u64())});
        case 5: { // a big integer: 19 to 60 decimal digits
            std::string d(1, static_cast<char>('1' + m_r.pick(9)));
            const unsigned n = 19 + m_r.pick(42);
            while (d.size() < n)
                d += static_cast<char>('0' + m_r.pick(10));
            if (d.size() == 19 && d <= "9223372036854775808")
                d = "9" + d; // keep it outside int64 either sign
            return add(Value{.type = Value::Big, .dec = (m_r.flag() ? "-" : "") + d});
        }
        case 6: {
            static const double specials[] = {0.0, -0.0, 1.5, 0.1, 1e16, 1e-5, 5e-324, 1.7976931348623157e308,
                                              HUGE_VAL, -HUGE_VAL, NAN, 123456.789, 1e22, 2.5e-310};
            return add(Value{.type = Value::Float, .f = specials[m_r.pick(sizeof specials / sizeof specials[0])]});
        }
        case 7: {
            const uint64_t bits = m_r.u64();
            double f = 0;
            std::memcpy(&f, &bits, sizeof f);
            return add(Value{.type = Value::Float, .f = f});
        }
        case 8: return add(Value{.type = Value::Str, .s = text()});
        default: {
            Value v{.type = Value::Bytes};
            const unsigned n = m_r.pick(7);
            for (unsigned j = 0; j < n; ++j)
                v.s += static_cast<char>(m_r.byte());
            return add(std::move(v));
        }
        }
    }

    Recipe& m_r;
    std::vector<int> m_mutables;
};

// ---------------------------------------------------------------- writing it as a pickle

// Decimal digits (no sign) to a little-endian magnitude.
std::vector<uint8_t> magnitudeOf(const std::string& digits)
{
    std::vector<uint8_t> mag;
    for (char c : digits) {
        unsigned carry = static_cast<unsigned>(c - '0');
        for (auto& b : mag) {
            const unsigned cur = b * 10u + carry;
            b = static_cast<uint8_t>(cur & 0xFF);
            carry = cur >> 8;
        }
        while (carry) {
            mag.push_back(static_cast<uint8_t>(carry & 0xFF));
            carry >>= 8;
        }
    }
    return mag;
}

// Two's complement, little-endian, shortest (as pickle's encode_long writes it).
std::string twosComplement(const std::string& dec)
{
    const bool negative = dec[0] == '-';
    std::vector<uint8_t> b = magnitudeOf(negative ? dec.substr(1) : dec);
    b.push_back(0);
    if (negative) {
        bool carry = true;
        for (auto& x : b) {
            x = static_cast<uint8_t>(~x);
            if (carry)
                carry = ++x == 0;
        }
    }
    while (b.size() > 1) {
        const uint8_t last = b.back(), prev = b[b.size() - 2];
        if ((last == 0 && !(prev & 0x80)) || (last == 0xFF && (prev & 0x80)))
            b.pop_back();
        else
            break;
    }
    return std::string(b.begin(), b.end());
}

std::string hexDigits(const std::string& dec)
{
    const bool negative = dec[0] == '-';
    const std::vector<uint8_t> mag = magnitudeOf(negative ? dec.substr(1) : dec);
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (std::size_t i = mag.size(); i-- > 0;) {
        out += digits[mag[i] >> 4];
        out += digits[mag[i] & 15];
    }
    const std::size_t first = out.find_first_not_of('0');
    return first == std::string::npos ? "0" : out.substr(first);
}

std::string le(uint64_t v, int n)
{
    std::string out;
    for (int i = 0; i < n; ++i)
        out += static_cast<char>((v >> (8 * i)) & 0xFF);
    return out;
}

class Writer {
public:
    Writer(Recipe& r, const std::vector<Value>& pool, int protocol) : m_r(r), m_pool(pool), m_protocol(protocol) {}

    std::string write(int root)
    {
        if (m_protocol >= 2)
            chunk(std::string("\x80") + static_cast<char>(m_protocol));
        emit(root);
        chunk(".");
        return frame();
    }

private:
    // One opcode with its operands: FRAMEs go between chunks, never inside one.
    void chunk(std::string op) { m_chunks.push_back(std::move(op)); }

    std::string frame()
    {
        std::string out;
        std::size_t i = 0;
        while (i < m_chunks.size()) {
            if (m_protocol >= 4 && m_r.pick(4) == 0) { // a FRAME over the next few opcodes
                const std::size_t n = 1 + m_r.pick(6);
                std::string body;
                for (std::size_t j = 0; j < n && i < m_chunks.size(); ++j)
                    body += m_chunks[i++];
                out += '\x95';
                out += le(body.size(), 8);
                out += body;
            } else {
                out += m_chunks[i++];
            }
        }
        return out;
    }

    // Python's int() spellings of a memo index for GET and PUT.
    std::string indexText(uint32_t index)
    {
        std::string d = std::to_string(index);
        switch (m_r.pick(6)) {
        case 0: return " " + d + "\t";
        case 1: return "+" + d;
        case 2: return "00" + d;
        case 3: { // an underscore between two digits
            if (d.size() < 2)
                return "0_" + d;
            return d.substr(0, 1) + "_" + d.substr(1);
        }
        default: return d;
        }
    }

    void put(int vi)
    {
        // MEMOIZE stores at the number of entries held: only when that index is still free.
        const auto held = static_cast<uint32_t>(m_used.size());
        if (m_protocol >= 4 && !m_used.count(held) && m_r.flag()) {
            m_used.insert(held);
            m_memo[vi] = held;
            chunk("\x94");
            return;
        }
        uint32_t index = m_next++;
        while (m_used.count(index))
            index = m_next++;
        switch (m_r.pick(3)) {
        case 0:
            if (index < 256) {
                chunk(std::string("q") + static_cast<char>(index));
                break;
            }
            [[fallthrough]];
        case 1: chunk("r" + le(index, 4)); break;
        default: {
            std::string op(1, 'p');
            op += indexText(index);
            op += '\n';
            chunk(std::move(op));
        }
        }
        m_used.insert(index);
        m_memo[vi] = index;
    }

    void get(uint32_t index)
    {
        switch (m_r.pick(3)) {
        case 0:
            if (index < 256) {
                chunk(std::string("h") + static_cast<char>(index));
                return;
            }
            [[fallthrough]];
        case 1: chunk("j" + le(index, 4)); return;
        default: {
            std::string op(1, 'g');
            op += indexText(index);
            op += '\n';
            chunk(std::move(op));
        }
        }
    }

    void noise()
    {
        switch (m_r.pick(12)) {
        case 0: chunk("N"); chunk("0"); return;         // push, POP
        case 1: chunk("("); chunk("0"); return;         // MARK, POP (pops the MARK)
        case 2: chunk("("); chunk("N"); chunk("1"); return; // MARK, value, POP_MARK
        default: return;
        }
    }

    void emitInt(int64_t v)
    {
        const std::string d = std::to_string(v);
        const unsigned how = m_r.pick(8);
        if (how == 0 && v >= 0 && v < 256) {
            chunk(std::string("K") + static_cast<char>(v));
        } else if (how == 1 && v >= 0 && v < 65536) {
            chunk("M" + le(static_cast<uint64_t>(v), 2));
        } else if (how == 2 && v >= INT32_MIN && v <= INT32_MAX) {
            chunk("J" + le(static_cast<uint64_t>(static_cast<uint32_t>(static_cast<int32_t>(v))), 4));
        } else if (how == 3) {
            chunk("\x8a" + std::string(1, 8) + le(static_cast<uint64_t>(v), 8)); // LONG1, 8 bytes
        } else if (how == 4 && (v < 0 || v > 1)) { // INT spellings CPython's strtol reads
            std::string t = d;
            switch (m_r.pick(4)) {
            case 0: t = " " + d; break;
            case 1: t = v >= 0 ? "+" + d : d; break;
            case 2: {
                char buf[32];
                std::snprintf(buf, sizeof buf, "%s0x%llx", v < 0 ? "-" : "",
                              static_cast<unsigned long long>(v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v)));
                t = buf;
                break;
            }
            default: break;
            }
            chunk("I" + t + "\n");
        } else if (how == 5 && d.size() >= 2 && d[0] != '-') { // int()'s underscores (strtol stops, int() reads)
            chunk("I" + d.substr(0, 1) + "_" + d.substr(1) + "\n");
        } else if (how == 6) {
            chunk("L" + d + (m_r.flag() ? "L" : "") + "\n");
        } else {
            chunk("I" + d + "\n");
        }
    }

    void emitAtom(const Value& v)
    {
        switch (v.type) {
        case Value::None: chunk("N"); return;
        case Value::Bool:
            if (m_r.flag())
                chunk(v.b ? "\x88" : "\x89");
            else
                chunk(v.b ? "I01\n" : "I00\n");
            return;
        case Value::Int:
            // A two-character INT operand of 0 or 1 reads as a bool ("01", " 1", "+0"): never for an int.
            if (v.i == 0 || v.i == 1)
                chunk(m_r.flag() ? std::string("K") + static_cast<char>(v.i) : "I" + std::to_string(v.i) + "\n");
            else
                emitInt(v.i);
            return;
        case Value::Big: {
            const unsigned how = m_r.pick(4);
            if (how == 0) {
                chunk("L" + v.dec + "L\n");
            } else if (how == 1) {
                chunk("L" + std::string(v.dec[0] == '-' ? "-" : "") + "0x" + hexDigits(v.dec) + "\n");
            } else {
                const std::string b = twosComplement(v.dec);
                if (b.size() < 256 && how == 2)
                    chunk("\x8a" + std::string(1, static_cast<char>(b.size())) + b);
                else
                    chunk("\x8b" + le(b.size(), 4) + b);
            }
            return;
        }
        case Value::Float:
            if (m_r.flag()) {
                uint64_t bits = 0;
                std::memcpy(&bits, &v.f, sizeof bits);
                std::string be;
                for (int i = 7; i >= 0; --i)
                    be += static_cast<char>((bits >> (8 * i)) & 0xFF);
                chunk("G" + be);
            } else {
                char buf[64];
                if (std::isnan(v.f)) {
                    std::strcpy(buf, "nan");
                } else if (std::isinf(v.f)) {
                    std::strcpy(buf, v.f > 0 ? "inf" : "-Infinity");
                } else {
                    const auto res = std::to_chars(buf, buf + sizeof buf - 1, v.f);
                    *res.ptr = 0;
                }
                chunk(std::string("F") + buf + "\n");
            }
            return;
        case Value::Str: {
            const unsigned how = m_r.pick(4);
            if (how == 0)
                chunk("X" + le(v.s.size(), 4) + v.s);
            else if (how == 1 && v.s.size() < 256)
                chunk("\x8c" + std::string(1, static_cast<char>(v.s.size())) + v.s);
            else if (how == 2)
                chunk("\x8d" + le(v.s.size(), 8) + v.s);
            else
                chunk("V" + rawUnicodeEscape(v.s) + "\n");
            return;
        }
        case Value::Bytes: {
            const unsigned how = m_r.pick(3);
            if (how == 0)
                chunk("C" + std::string(1, static_cast<char>(v.s.size())) + v.s);
            else if (how == 1)
                chunk("B" + le(v.s.size(), 4) + v.s);
            else
                chunk("\x8e" + le(v.s.size(), 8) + v.s);
            if (m_r.pick(4) == 0)
                chunk("\x98"); // READONLY_BUFFER: bytes stay bytes
            return;
        }
        default: return;
        }
    }

    // raw-unicode-escape as pickle writes it: \uXXXX for '\\', '\n', '\r', '\0' and everything past
    // Latin-1, the rest as Latin-1 bytes.
    static std::string rawUnicodeEscape(const std::string& utf8)
    {
        std::string out;
        for (std::size_t i = 0; i < utf8.size();) {
            const auto c = static_cast<unsigned char>(utf8[i]);
            uint32_t cp = c;
            std::size_t n = 1;
            if (c >= 0xF0) {
                cp = c & 0x07u;
                n = 4;
            } else if (c >= 0xE0) {
                cp = c & 0x0Fu;
                n = 3;
            } else if (c >= 0xC0) {
                cp = c & 0x1Fu;
                n = 2;
            }
            for (std::size_t k = 1; k < n; ++k)
                cp = cp << 6 | (static_cast<unsigned char>(utf8[i + k]) & 0x3Fu);
            i += n;
            char buf[16];
            if (cp == '\\' || cp == '\n' || cp == '\r' || cp == 0 || (cp > 0xFF && cp < 0x10000)) {
                std::snprintf(buf, sizeof buf, "\\u%04x", cp);
                out += buf;
            } else if (cp >= 0x10000) {
                std::snprintf(buf, sizeof buf, "\\U%08x", cp);
                out += buf;
            } else {
                out += static_cast<char>(cp);
            }
        }
        return out;
    }

    void emit(int vi)
    {
        const Value& v = m_pool[static_cast<std::size_t>(vi)];
        if (const auto it = m_memo.find(vi); it != m_memo.end()) {
            get(it->second);
            return;
        }
        noise();
        const bool shared = v.refs > 1;
        switch (v.type) {
        case Value::Tuple: {
            const std::size_t n = v.items.size();
            if (n == 0) {
                chunk(m_r.flag() ? ")" : "(t");
                break;
            }
            const bool counted = n <= 3 && m_r.flag();
            if (!counted)
                chunk("(");
            for (int item : v.items)
                emit(item);
            chunk(counted ? std::string(1, static_cast<char>(0x84 + n)) : "t");
            break;
        }
        case Value::FrozenSet:
            chunk("(");
            for (int item : v.items)
                emit(item);
            chunk("\x91");
            break;
        case Value::List:
        case Value::Dict:
        case Value::Set: {
            const bool fromMark = !shared && v.type != Value::Set && m_r.flag();
            if (fromMark) { // MARK, items, LIST / DICT: nothing can refer to it before it exists
                chunk("(");
                for (int item : v.items)
                    emit(item);
                chunk(v.type == Value::List ? "l" : "d");
                break;
            }
            chunk(v.type == Value::List ? "]" : v.type == Value::Dict ? "}" : "\x8f");
            if (shared || m_r.pick(3) == 0)
                put(vi); // before its items, so they can refer to it
            fill(v);
            if (m_r.pick(5) == 0) { // DUP, POP
                chunk("2");
                chunk("0");
            }
            return;
        }
        case Value::ByteArray: {
            // BYTEARRAY8 with a prefix, the rest through APPENDS / APPEND of ints (bytearray.extend).
            const std::size_t head = m_r.pick(static_cast<unsigned>(v.s.size() + 1));
            chunk("\x96" + le(head, 8) + v.s.substr(0, head));
            if (shared || m_r.pick(3) == 0)
                put(vi);
            if (head < v.s.size()) {
                const bool one = head + 1 == v.s.size() && m_r.flag();
                if (!one)
                    chunk("(");
                for (std::size_t k = head; k < v.s.size(); ++k)
                    chunk(std::string("K") + v.s[k]);
                chunk(one ? "a" : "e");
            }
            return;
        }
        default:
            emitAtom(v);
            break;
        }
        if (shared || m_r.pick(4) == 0)
            put(vi);
    }

    // The items of a container already on the stack: one at a time or in MARKed batches.
    void fill(const Value& v)
    {
        const std::size_t step = v.type == Value::Dict ? 2 : 1;
        std::size_t k = 0;
        while (k < v.items.size()) {
            const std::size_t left = (v.items.size() - k) / step;
            const std::size_t batch = m_r.flag() ? 1 : 1 + m_r.pick(static_cast<unsigned>(left));
            const bool single = batch == 1 && v.type != Value::Set && m_r.flag();
            if (!single)
                chunk("(");
            for (std::size_t j = 0; j < batch * step; ++j)
                emit(v.items[k + j]);
            k += batch * step;
            if (single)
                chunk(v.type == Value::List ? "a" : "s");
            else
                chunk(v.type == Value::List ? "e" : v.type == Value::Dict ? "u" : "\x90");
        }
    }

    Recipe& m_r;
    const std::vector<Value>& m_pool;
    int m_protocol;
    std::vector<std::string> m_chunks;
    std::unordered_map<int, uint32_t> m_memo;
    std::set<uint32_t> m_used; // memo indices stored so far
    uint32_t m_next = 0;
};

// ---------------------------------------------------------------- comparing the graph with the value

[[noreturn]] void mismatch(const char* what, int vi)
{
    std::fprintf(stderr, "fuzz_pickle_roundtrip: %s (value %d)\n", what, vi);
    std::abort();
}

class Checker {
public:
    Checker(const ckpt::ValueGraph& g, const std::vector<Value>& pool) : m_g(g), m_pool(pool) {}

    void same(int vi, NodeId id, int depth = 0)
    {
        if (depth > 2000)
            mismatch("nesting too deep to compare", vi);
        if (!m_g.valid(id))
            mismatch("a missing node", vi);
        const Value& v = m_pool[static_cast<std::size_t>(vi)];
        const ckpt::Node& n = m_g[id];
        if (isMutable(v.type)) { // identity: one node for one object, in both directions
            if (const auto it = m_nodeOf.find(vi); it != m_nodeOf.end()) {
                if (it->second != id)
                    mismatch("a shared value read as two objects", vi);
                return;
            }
            if (!m_valueOf.emplace(id, vi).second)
                mismatch("two values read as one object", vi);
            m_nodeOf.emplace(vi, id);
        }
        switch (v.type) {
        case Value::None: expect(n.kind == Kind::None, "None", vi); return;
        case Value::Bool: expect(n.kind == Kind::Bool && n.flag == v.b, "bool", vi); return;
        case Value::Int: expect(n.kind == Kind::Int && n.i == v.i, "int", vi); return;
        case Value::Big: expect(n.kind == Kind::BigInt && n.text == v.dec, "big int", vi); return;
        case Value::Float: {
            uint64_t a = 0, b = 0;
            std::memcpy(&a, &n.f, sizeof a);
            std::memcpy(&b, &v.f, sizeof b);
            expect(n.kind == Kind::Float && (a == b || (std::isnan(n.f) && std::isnan(v.f))), "float", vi);
            return;
        }
        case Value::Str: expect(n.kind == Kind::String && n.text == v.s, "str", vi); return;
        case Value::Bytes: expect(n.kind == Kind::Bytes && n.text == v.s, "bytes", vi); return;
        case Value::ByteArray: expect(n.kind == Kind::ByteArray && n.text == v.s, "bytearray", vi); return;
        case Value::Tuple: expect(n.kind == Kind::Tuple, "tuple", vi); break;
        case Value::List: expect(n.kind == Kind::List, "list", vi); break;
        case Value::Dict: expect(n.kind == Kind::Dict, "dict", vi); break;
        case Value::Set: expect(n.kind == Kind::Set, "set", vi); break;
        case Value::FrozenSet: expect(n.kind == Kind::FrozenSet, "frozenset", vi); break;
        }
        expect(n.items.size() == v.items.size(), "number of items", vi);
        const std::vector<NodeId> items = n.items; // the graph is not changed; a copy keeps it simple
        for (std::size_t k = 0; k < items.size(); ++k)
            same(v.items[k], items[k], depth + 1);
    }

private:
    static void expect(bool ok, const char* what, int vi)
    {
        if (!ok)
            mismatch(what, vi);
    }

    const ckpt::ValueGraph& m_g;
    const std::vector<Value>& m_pool;
    std::unordered_map<int, NodeId> m_nodeOf;
    std::unordered_map<NodeId, int> m_valueOf;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    Recipe recipe(data, size);
    const int protocol = static_cast<int>(recipe.pick(6));
    Builder builder(recipe);
    const int root = builder.value(1 + static_cast<int>(recipe.pick(8)));
    Writer writer(recipe, builder.pool, protocol);
    const std::string pickle = writer.write(root);

    // CKPT_ROUNDTRIP_DUMP=DIR keeps each pickle written, to check with CPython or to reproduce.
    if (const char* dir = std::getenv("CKPT_ROUNDTRIP_DUMP")) {
        static int count = 0;
        std::ofstream(std::filesystem::path(dir) / ("roundtrip-" + std::to_string(count++) + ".pkl"), std::ios::binary)
            << pickle;
    }

    ckpt::ValueGraph graph;
    ckpt::PickleMachine vm(graph);
    ckpt::PickleRun run;
    try {
        run = vm.run(ckpt::Bytes(reinterpret_cast<const std::byte*>(pickle.data()), pickle.size()));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz_pickle_roundtrip: a valid pickle was refused: %s\n", e.what());
        std::abort();
    }
    if (run.end != pickle.size())
        mismatch("STOP read at the wrong place", root);
    Checker(graph, builder.pool).same(root, run.root);
    return 0;
}
